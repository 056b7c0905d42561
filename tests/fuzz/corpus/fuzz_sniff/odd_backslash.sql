CREATE TABLE t (v text DEFAULT 'a\');
CREATE TABLE `u` (a int);
