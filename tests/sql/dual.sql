-- FROM DUAL: no table, as MySQL (checked against MariaDB 10.11); a quoted
-- `dual` is a table of that name.
SELECT 1 FROM DUAL;
SELECT 1 + 1 AS two FROM dual WHERE 1 = 1;
SELECT 'x' FROM DUAL WHERE 1 = 0;
SELECT COUNT(*) FROM DUAL;
CREATE DATABASE du;
USE du;
SELECT 1 FROM `dual`;
SELECT 1 FROM du.dual;
