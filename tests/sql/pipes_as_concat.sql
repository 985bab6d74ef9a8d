-- `||` is OR by default and CONCAT under sql_mode PIPES_AS_CONCAT (sqlx
-- sets it at connect, in one SET with time_zone and NAMES). Checked
-- against MariaDB 10.11.
SELECT 1 || 0, 0 || 0, 'a' || 'b', NULL || 1;
SET sql_mode = (SELECT CONCAT(@@sql_mode, ',PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION')), time_zone = '+00:00', NAMES utf8mb4 COLLATE utf8mb4_unicode_ci;
SELECT @@sql_mode, @@time_zone, @@character_set_client, @@character_set_results;
SELECT 1 || 0, 'a' || 'b' || 'c', NULL || 'x', 1 + 1 || 2;
CREATE DATABASE p;
CREATE TABLE p.t (a VARCHAR(10), b INT);
INSERT INTO p.t VALUES ('x', 1), ('y', NULL);
SELECT a || '-' || b FROM p.t ORDER BY a;
SET sql_mode = DEFAULT;
SELECT 'a' || 'b';
-- NAMES first, then other assignments.
SET NAMES utf8mb4, @x = 5;
SELECT @x;
