CREATE TABLE `t` (a int DEFAULT '1'::integer);
