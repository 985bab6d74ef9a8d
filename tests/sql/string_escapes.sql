-- MySQL's backslash escapes in string literals, the same in every statement:
-- those sqlparser reads (SELECT) and those Tributary's own parser reads (SET,
-- SHOW … LIKE). \% and \_ keep their backslash (LIKE reads them).
SELECT HEX('a\rb\Zc\bd\\e\'f\"g\%h\_i\xj\0k\nl\tm') AS h;
SET @v = 'a\rb\Zc\bd\\e\'f\"g\%h\_i\xj\0k\nl\tm';
SELECT HEX(@v) AS h, @v = 'a\rb\Zc\bd\\e\'f\"g\%h\_i\xj\0k\nl\tm' AS same;
SET @w := "x\ry", @u = 'p\_q';
SELECT HEX(@w) AS h, @u AS u, 'p_q' LIKE @u AS lit, 'pzq' LIKE @u AS any_char;
SHOW VARIABLES LIKE 'auto\_increment\_increment';
