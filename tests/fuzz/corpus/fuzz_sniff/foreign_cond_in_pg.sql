-- PostgreSQL database dump
/*!40101 SET NAMES utf8 */;
