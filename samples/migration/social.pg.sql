--
-- PostgreSQL database dump
--

\restrict LDlnGQwix5u9axkhm0LHzsOE95LdHrSZZ1SdetAhQOC1PISRzUCtsH9DFTgr03m

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: follows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.follows (
    follower_id text NOT NULL,
    followee_id text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    name text NOT NULL,
    joined date
);


--
-- Data for Name: follows; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.follows (follower_id, followee_id, created_at) FROM stdin;
alice	bob	2024-06-20 16:13:20+00
alice	carol	2024-06-20 16:15:00+00
dave	bob	2024-06-20 16:16:40+00
erin	bob	2024-06-21 07:00:00+00
bob	alice	2024-06-22 12:00:00+00
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.users (id, name, joined) FROM stdin;
alice	Alice Liddell	2024-01-05
bob	Bob O'Neil	2024-02-11
carol	Carol Ng	\N
dave	Dave "D" Smith	2024-03-30
erin	Erin 絵里	2024-04-01
\.


--
-- Name: follows follows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.follows
    ADD CONSTRAINT follows_pkey PRIMARY KEY (follower_id, followee_id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: follows follows_followee_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.follows
    ADD CONSTRAINT follows_followee_id_fkey FOREIGN KEY (followee_id) REFERENCES public.users(id);


--
-- Name: follows follows_follower_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.follows
    ADD CONSTRAINT follows_follower_id_fkey FOREIGN KEY (follower_id) REFERENCES public.users(id);


--
-- PostgreSQL database dump complete
--

\unrestrict LDlnGQwix5u9axkhm0LHzsOE95LdHrSZZ1SdetAhQOC1PISRzUCtsH9DFTgr03m

