/*M!999999\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: localhost    Database: fx
-- ------------------------------------------------------
-- Server version	10.11.19-MariaDB-0+deb12u1

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Table structure for table `empty_t`
--

DROP TABLE IF EXISTS `empty_t`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `empty_t` (
  `a` int(11) DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `empty_t`
--

LOCK TABLES `empty_t` WRITE;
/*!40000 ALTER TABLE `empty_t` DISABLE KEYS */;
/*!40000 ALTER TABLE `empty_t` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `follows`
--

DROP TABLE IF EXISTS `follows`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `follows` (
  `follower_id` varchar(32) NOT NULL,
  `followee_id` varchar(32) NOT NULL,
  `created_at` datetime NOT NULL,
  PRIMARY KEY (`follower_id`,`followee_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `follows`
--

LOCK TABLES `follows` WRITE;
/*!40000 ALTER TABLE `follows` DISABLE KEYS */;
INSERT INTO `follows` (`follower_id`, `followee_id`, `created_at`) VALUES ('alice','bob','2024-06-20 16:13:20'),
('alice','carol','2024-06-20 16:15:00'),
('dave','bob','2024-06-20 16:16:40');
/*!40000 ALTER TABLE `follows` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `samples`
--

DROP TABLE IF EXISTS `samples`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `samples` (
  `id` int(11) NOT NULL,
  `txt` mediumtext DEFAULT NULL,
  `small` tinyint(4) DEFAULT NULL,
  `big` bigint(20) DEFAULT NULL,
  `ubig` bigint(20) unsigned DEFAULT NULL,
  `amount` decimal(20,6) DEFAULT NULL,
  `ratio` double DEFAULT NULL,
  `flag` tinyint(1) DEFAULT NULL,
  `bit1` bit(1) DEFAULT NULL,
  `bits` bit(10) DEFAULT NULL,
  `created` datetime DEFAULT NULL,
  `stamped` timestamp NULL DEFAULT NULL,
  `day` date DEFAULT NULL,
  `label` varchar(40) NOT NULL DEFAULT '',
  `data` blob DEFAULT NULL,
  `code` varbinary(16) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `samples`
--

LOCK TABLES `samples` WRITE;
/*!40000 ALTER TABLE `samples` DISABLE KEYS */;
INSERT INTO `samples` (`id`, `txt`, `small`, `big`, `ubig`, `amount`, `ratio`, `flag`, `bit1`, `bits`, `created`, `stamped`, `day`, `label`, `data`, `code`) VALUES (1,'it\'s \"quoted\"',-128,9223372036854775807,18446744073709551615,12345678901234.567890,1.5,1,'','�','2024-01-02 03:04:05','2024-06-30 21:59:59','2024-02-29','quotes','\0�','\0�'),
(2,'back\\slash \\\\ double and \\N inside',127,-9223372036854775808,0,-0.000001,-0.00000000025,0,'\0','\0','1970-01-01 00:00:00','1970-01-01 00:00:01','1000-01-01','backslash','\0\'\\\n\r\Z\"�','�\0'),
(3,'\\N',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'literal \\N',NULL,NULL),
(4,'tab	here\r\nCRLF\nLF\rCR',0,0,1,0.000000,0,NULL,NULL,NULL,'2038-01-19 03:14:07','2038-01-19 03:14:07','9999-12-31','tab	crlf','',''),
(5,'日本語テキスト 🎉😀',1,1,2,1.000001,1e300,1,'','\0','2024-01-02 03:04:05',NULL,NULL,'ユニコード 😀','日',NULL),
(6,'',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'','',''),
(7,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'null',NULL,NULL),
(9,'nul\0ctrlz\Zbs pct% und_ sq\' dq\" semi; paren) comma,',-1,-1,3,-99999999999999.999999,-0.5,0,'\0','\0\0',NULL,NULL,NULL,'/* not a comment */ -- nor this','/*','--');
/*!40000 ALTER TABLE `samples` ENABLE KEYS */;
UNLOCK TABLES;
/*!50003 SET @saved_cs_client      = @@character_set_client */ ;
/*!50003 SET @saved_cs_results     = @@character_set_results */ ;
/*!50003 SET @saved_col_connection = @@collation_connection */ ;
/*!50003 SET character_set_client  = utf8mb4 */ ;
/*!50003 SET character_set_results = utf8mb4 */ ;
/*!50003 SET collation_connection  = utf8mb4_general_ci */ ;
/*!50003 SET @saved_sql_mode       = @@sql_mode */ ;
/*!50003 SET sql_mode              = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION' */ ;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER samples_bi BEFORE INSERT ON samples FOR EACH ROW
BEGIN
  IF NEW.label = 'x;y' THEN SET NEW.label = 'z'; END IF;
END 
*/;;
DELIMITER ;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;
/*!50003 SET character_set_client  = @saved_cs_client */ ;
/*!50003 SET character_set_results = @saved_cs_results */ ;
/*!50003 SET collation_connection  = @saved_col_connection */ ;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed on 2026-12-02 14:30:50
