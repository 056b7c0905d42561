CREATE TABLE `t` (a int);
INSERT INTO `t` VALUES (1,'a\'b');
