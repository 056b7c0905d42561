/*M!999999\- enable the sandbox mode */ 
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `hostile` (
  `id` int(11) NOT NULL,
  `note` varchar(200) NOT NULL DEFAULT '-- MySQL dump; /*!40101 SET NAMES latin1 */; PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; COPY t FROM stdin; C:\\dir\\',
  `v` longtext DEFAULT NULL,
  `i` bigint(20) DEFAULT NULL,
  `d` decimal(20,6) DEFAULT NULL,
  `f` double DEFAULT NULL,
  `flag` tinyint(1) DEFAULT NULL,
  `bin` blob DEFAULT NULL,
  `ts` datetime DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='-- MySQL dump; /*!40101 SET NAMES latin1 */; PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; COPY t FROM stdin; C:\\dir\\';
/*!40101 SET character_set_client = @saved_cs_client */;
INSERT INTO `hostile` VALUES
(1,'mysql conditional comment','/*!40101 SET NAMES latin1 */',0,0.000000,0.1,1,'\0\'\\\n\r\"ÿ','2024-01-02 03:04:05'),
(2,'mysql header','-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)',1,-1.500000,-0.00000000025,0,'','1970-01-01 00:00:00'),
(3,'mariadb header','-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB',-1,12345678901234.567890,1.5,NULL,NULL,NULL),
(4,'mariadb sandbox','/*M!999999\\- enable the sandbox mode */',9223372036854775807,0.000001,0.30000000000000004,1,'\\N','2038-01-19 03:14:07'),
(5,'mysql preamble lines','/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\nLOCK TABLES `t` WRITE;',-9223372036854775808,NULL,NULL,0,'\\x41','9999-12-31 23:59:59'),
(6,'mysql trailer','-- Dump completed on 2024-01-02  3:04:05',42,99999999999999.999999,1e100,NULL,'\0	\n\r\Z !\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~€‚ƒ„…†‡ˆ‰Š‹Œ‘’“”•–—˜™š›œŸ ¡¢£¤¥¦§¨©ª«¬­®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏĞÑÒÓÔÕÖ×ØÙÚÛÜİŞßàáâãäåæçèéêëìíîïğñòóôõö÷øùúûüışÿ','2000-02-29 12:00:00'),
(7,'pg header','--\n-- PostgreSQL database dump\n--\n',NULL,7.250000,123456.789,1,'PRAGMA foreign_keys=OFF;\n','2024-01-02 03:04:05'),
(8,'pg trailer','-- PostgreSQL database dump complete',0,0.000000,0.1,0,'\0\'\\\n\r\"ÿ','1970-01-01 00:00:00'),
(9,'pg preamble','SET standard_conforming_strings = on;\nSELECT pg_catalog.set_config(\'search_path\', \'\', false);',1,-1.500000,-0.00000000025,NULL,'',NULL),
(10,'pg nonstd','SET standard_conforming_strings = off;',-1,12345678901234.567890,1.5,1,NULL,'2038-01-19 03:14:07'),
(11,'restrict','\\restrict AbC123xyz',9223372036854775807,0.000001,0.30000000000000004,0,'\\N','9999-12-31 23:59:59'),
(12,'restrict mid line','before\n\\restrict AbC123xyz\nafter',-9223372036854775808,NULL,NULL,NULL,'\\x41','2000-02-29 12:00:00'),
(13,'copy header','COPY public.t (a, b) FROM stdin;',42,99999999999999.999999,1e100,1,'\0	\n\r\Z !\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~€‚ƒ„…†‡ˆ‰Š‹Œ‘’“”•–—˜™š›œŸ ¡¢£¤¥¦§¨©ª«¬­®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏĞÑÒÓÔÕÖ×ØÙÚÛÜİŞßàáâãäåæçèéêëìíîïğñòóôõö÷øùúûüışÿ','2024-01-02 03:04:05'),
(14,'copy end alone','\\.',NULL,7.250000,123456.789,0,'PRAGMA foreign_keys=OFF;\n','1970-01-01 00:00:00'),
(15,'copy end on a line','line1\n\\.\nline3',0,0.000000,0.1,NULL,'\0\'\\\n\r\"ÿ',NULL),
(16,'sqlite preamble','PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;',1,-1.500000,-0.00000000025,1,'','2038-01-19 03:14:07'),
(17,'sqlite begin','BEGIN TRANSACTION;',-1,12345678901234.567890,1.5,0,NULL,'9999-12-31 23:59:59'),
(18,'sqlite commit','COMMIT;',9223372036854775807,0.000001,0.30000000000000004,NULL,'\\N','2000-02-29 12:00:00'),
(19,'delimiter','DELIMITER ;;',-9223372036854775808,NULL,NULL,1,'\\x41','2024-01-02 03:04:05'),
(20,'backslash start','\\starts with a backslash',42,99999999999999.999999,1e100,0,'\0	\n\r\Z !\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~€‚ƒ„…†‡ˆ‰Š‹Œ‘’“”•–—˜™š›œŸ ¡¢£¤¥¦§¨©ª«¬­®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏĞÑÒÓÔÕÖ×ØÙÚÛÜİŞßàáâãäåæçèéêëìíîïğñòóôõö÷øùúûüışÿ','1970-01-01 00:00:00'),
(21,'backslash end','ends with a backslash\\',NULL,7.250000,123456.789,NULL,'PRAGMA foreign_keys=OFF;\n',NULL),
(22,'backslash middle','mid\\dle',0,0.000000,0.1,1,'\0\'\\\n\r\"ÿ','2038-01-19 03:14:07'),
(23,'backslash doubled','doubled \\\\ backslash',1,-1.500000,-0.00000000025,0,'','9999-12-31 23:59:59'),
(24,'one backslash','\\',-1,12345678901234.567890,1.5,NULL,NULL,'2000-02-29 12:00:00'),
(25,'two backslashes','\\\\',9223372036854775807,0.000001,0.30000000000000004,1,'\\N','2024-01-02 03:04:05'),
(26,'backslash quote','it\\\'s \\\"quoted\\\"',-9223372036854775808,NULL,NULL,0,'\\x41','1970-01-01 00:00:00'),
(27,'windows path','C:\\Users\\me\\new folder\\table.txt',42,99999999999999.999999,1e100,NULL,'\0	\n\r\Z !\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~€‚ƒ„…†‡ˆ‰Š‹Œ‘’“”•–—˜™š›œŸ ¡¢£¤¥¦§¨©ª«¬­®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏĞÑÒÓÔÕÖ×ØÙÚÛÜİŞßàáâãäåæçèéêëìíîïğñòóôõö÷øùúûüışÿ',NULL),
(28,'unc path','\\\\server\\share\\n\\t\\0\\Z\\b\\r',NULL,7.250000,123456.789,1,'PRAGMA foreign_keys=OFF;\n','2038-01-19 03:14:07'),
(29,'backslash N','\\N',0,0.000000,0.1,0,'\0\'\\\n\r\"ÿ','9999-12-31 23:59:59'),
(30,'N and NULL','NULL',1,-1.500000,-0.00000000025,NULL,'','2000-02-29 12:00:00'),
(31,'escape lookalikes','\\x41 \\101 \\u0041 \\U0001F600 \\n\\t',-1,12345678901234.567890,1.5,1,NULL,'2024-01-02 03:04:05'),
(32,'dollar quotes','$$ dollar $$ and $tag$ tagged $tag$ and $1',9223372036854775807,0.000001,0.30000000000000004,0,'\\N','1970-01-01 00:00:00'),
(33,'line comment','-- not a comment',-9223372036854775808,NULL,NULL,NULL,'\\x41',NULL),
(34,'block comment','/* not a comment */ and */ then /*',42,99999999999999.999999,1e100,1,'\0	\n\r\Z !\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUV