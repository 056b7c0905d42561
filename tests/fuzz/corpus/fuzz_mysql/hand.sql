CREATE TABLE t (a int, b text, c bit(8), d blob);
INSERT INTO t VALUES (1,'a\0\Z\%',b'101',0x0aFF),(-2.5e3,_binary 'x''y',0x1,X'00');
INSERT IGNORE INTO t (b,a) VALUES ('q',1);
DELIMITER ;;
CREATE PROCEDURE p() BEGIN INSERT INTO t VALUES (9); END;;
DELIMITER ;
# c
/*!40000 ALTER TABLE t */;
