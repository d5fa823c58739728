--
-- PostgreSQL database dump
--


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
-- Name: admissions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.admissions (
    ticket_id uuid NOT NULL,
    admitted_at text NOT NULL,
    admitted_by text NOT NULL
);


--
-- Name: event_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_changes (
    id integer NOT NULL,
    version bigint NOT NULL,
    CONSTRAINT event_changes_id_check CHECK ((id = 1))
);


--
-- Name: event_dates; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_dates (
    date date NOT NULL,
    event_id uuid NOT NULL,
    name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id uuid NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    location text NOT NULL,
    description text NOT NULL,
    dates text NOT NULL,
    price double precision NOT NULL,
    cancelled boolean DEFAULT false NOT NULL,
    last_date date
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    user_name text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    ticket_id uuid NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.settings (
    name text NOT NULL,
    value text NOT NULL
);


--
-- Name: tickets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tickets (
    id uuid NOT NULL,
    type text NOT NULL,
    date date NOT NULL,
    event_id uuid,
    confirmation_code text NOT NULL,
    email text NOT NULL,
    phone text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tickets_type_check CHECK ((type = ANY (ARRAY['general'::text, 'event'::text])))
);


--
-- Data for Name: admissions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.admissions VALUES ('00000000-0000-4000-9000-000000000001', '2026-12-01T09:30:00Z', 'gate');


--
-- Data for Name: event_changes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.event_changes VALUES (1, 5);


--
-- Data for Name: event_dates; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.event_dates VALUES ('2026-12-05', '00000000-0000-4000-8000-000000000001', 'Night at the museum');
INSERT INTO public.event_dates VALUES ('2026-12-10', '00000000-0000-4000-8000-000000000002', 'Printmaking workshop');
INSERT INTO public.event_dates VALUES ('2026-12-17', '00000000-0000-4000-8000-000000000002', 'Printmaking workshop');
INSERT INTO public.event_dates VALUES ('2027-01-07', '00000000-0000-4000-8000-000000000002', 'Printmaking workshop');
INSERT INTO public.event_dates VALUES ('2026-11-30', '00000000-0000-4000-8000-000000000004', 'Winter lectures');
INSERT INTO public.event_dates VALUES ('2027-02-01', '00000000-0000-4000-8000-000000000004', 'Winter lectures');


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES ('00000000-0000-4000-8000-000000000001', 'Night at the museum', 'East wing', 'Night at the museum, as the museum''s programme says.', '["2026-12-05"]', 12.5, false, '2026-12-05');
INSERT INTO public.events VALUES ('00000000-0000-4000-8000-000000000002', 'Printmaking workshop', 'East wing', 'Printmaking workshop, as the museum''s programme says.', '["2026-12-10", "2026-12-17", "2027-01-07"]', 12.5, false, '2027-01-07');
INSERT INTO public.events VALUES ('00000000-0000-4000-8000-000000000004', 'Winter lectures', 'East wing', 'Winter lectures, as the museum''s programme says.', '["2026-11-30", "2027-02-01"]', 12.5, false, '2027-02-01');
INSERT INTO public.events VALUES ('00000000-0000-4000-8000-000000000003', 'Restorers at work', 'East wing', 'Restorers at work, as the museum''s programme says.', '["2026-12-12", "2026-12-13"]', 12.5, true, '2026-12-13');


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.idempotency_keys VALUES ('visitor', 'key-1', 'fingerprint-1', '00000000-0000-4000-9000-000000000001');


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES (1, '2026-11-24 18:57:34.987572+00');
INSERT INTO public.schema_migrations VALUES (2, '2026-11-24 18:57:34.987572+00');
INSERT INTO public.schema_migrations VALUES (3, '2026-11-24 18:57:34.987572+00');
INSERT INTO public.schema_migrations VALUES (4, '2026-11-24 18:57:34.987572+00');
INSERT INTO public.schema_migrations VALUES (5, '2026-11-24 18:57:34.987572+00');
INSERT INTO public.schema_migrations VALUES (6, '2026-11-24 18:57:34.987572+00');


--
-- Data for Name: settings; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.settings VALUES ('qr_secret', 'fake-secret-of-a-test-fixture');


--
-- Data for Name: tickets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tickets VALUES ('00000000-0000-4000-9000-000000000001', 'general', '2026-12-01', NULL, 'ticket-general-000001-00001', 'visitor1@example.org', '+44 20 7946 0000', '2026-11-24 18:57:35.020325+00');
INSERT INTO public.tickets VALUES ('00000000-0000-4000-9000-000000000002', 'event', '2026-12-17', '00000000-0000-4000-8000-000000000002', 'ticket-event-000002-00002', 'visitor2@example.org', NULL, '2026-11-24 18:57:35.022108+00');
INSERT INTO public.tickets VALUES ('00000000-0000-4000-9000-000000000003', 'event', '2026-12-12', '00000000-0000-4000-8000-000000000003', 'ticket-event-000003-00003', 'visitor3@example.org', '+44 20 7946 0000', '2026-11-24 18:57:35.023092+00');
INSERT INTO public.tickets VALUES ('00000000-0000-4000-9000-000000000004', 'event', '2026-12-05', '00000000-0000-4000-8000-000000000001', 'ticket-event-000004-00004', 'visitor4@example.org', NULL, '2026-11-24 18:57:35.023923+00');


--
-- Name: admissions admissions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admissions
    ADD CONSTRAINT admissions_pkey PRIMARY KEY (ticket_id);


--
-- Name: event_changes event_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_changes
    ADD CONSTRAINT event_changes_pkey PRIMARY KEY (id);


--
-- Name: event_dates event_dates_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_dates
    ADD CONSTRAINT event_dates_pkey PRIMARY KEY (date, event_id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_name, key);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (name);


--
-- Name: tickets tickets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tickets
    ADD CONSTRAINT tickets_pkey PRIMARY KEY (id);


--
-- Name: tickets unique_confirmation_code; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tickets
    ADD CONSTRAINT unique_confirmation_code UNIQUE (confirmation_code);


--
-- Name: event_dates_by_event; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_dates_by_event ON public.event_dates USING btree (event_id, date);


--
-- Name: event_dates_in_order; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_dates_in_order ON public.event_dates USING btree (date, name, event_id);


--
-- Name: events_by_last_date; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_by_last_date ON public.events USING btree (last_date, cancelled);


--
-- Name: idempotency_keys_by_ticket; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_by_ticket ON public.idempotency_keys USING btree (ticket_id);


--
-- Name: tickets_by_date; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tickets_by_date ON public.tickets USING btree (date, event_id);


--
-- Name: tickets_by_event; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tickets_by_event ON public.tickets USING btree (event_id, date);


--
-- Name: tickets_with_contacts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tickets_with_contacts ON public.tickets USING btree (date) WHERE (email <> ''::text);


--
-- Name: admissions admissions_ticket_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admissions
    ADD CONSTRAINT admissions_ticket_id_fkey FOREIGN KEY (ticket_id) REFERENCES public.tickets(id);


--
-- Name: event_dates event_dates_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_dates
    ADD CONSTRAINT event_dates_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id);


--
-- Name: idempotency_keys idempotency_keys_ticket_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_ticket_id_fkey FOREIGN KEY (ticket_id) REFERENCES public.tickets(id) DEFERRABLE INITIALLY DEFERRED;


--
-- Name: tickets tickets_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tickets
    ADD CONSTRAINT tickets_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id);


--
-- PostgreSQL database dump complete
--


