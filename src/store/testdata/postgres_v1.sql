--
-- PostgreSQL database dump
--

\restrict Nd1Kjkxe2mlY7YipLR6MUR04MA76NoF3KzxDv1pcOq2f6nMPuoaNeYZVLo1AjzZ

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
-- Name: alerts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alerts (
    alert_id bigint NOT NULL,
    kind text NOT NULL,
    task_id text NOT NULL,
    node_id text NOT NULL,
    from_state integer,
    to_state integer,
    event_id text NOT NULL,
    detail text NOT NULL,
    at bigint NOT NULL
);


--
-- Name: alerts_alert_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.alerts ALTER COLUMN alert_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.alerts_alert_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: dead_letters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.dead_letters (
    letter_id bigint NOT NULL,
    event_json text NOT NULL,
    reason text NOT NULL,
    deliveries integer NOT NULL,
    parked_at bigint NOT NULL
);


--
-- Name: dead_letters_letter_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.dead_letters ALTER COLUMN letter_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.dead_letters_letter_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.history (
    hist_id bigint NOT NULL,
    task_ref bigint NOT NULL,
    node_ref bigint NOT NULL,
    cause integer NOT NULL,
    outcome integer NOT NULL,
    seq bigint,
    event_type integer,
    attempt bigint NOT NULL,
    from_state integer NOT NULL,
    to_state integer NOT NULL,
    version bigint NOT NULL,
    at bigint NOT NULL,
    detail text DEFAULT ''::text NOT NULL,
    payload text DEFAULT ''::text NOT NULL,
    payload_ref bigint
);


--
-- Name: history_hist_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.history ALTER COLUMN hist_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.history_hist_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: node_seq; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.node_seq (
    node_ref bigint NOT NULL,
    hwm bigint NOT NULL,
    n_above integer DEFAULT 0 NOT NULL
);


--
-- Name: nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.nodes (
    node_ref bigint NOT NULL,
    node_id text NOT NULL,
    registered boolean NOT NULL,
    labels text DEFAULT '{}'::text NOT NULL,
    groups_json text DEFAULT '[]'::text NOT NULL,
    intents_json text DEFAULT '[]'::text NOT NULL,
    mode text DEFAULT ''::text NOT NULL,
    agent_version text DEFAULT ''::text NOT NULL,
    last_heartbeat bigint,
    updated_at bigint NOT NULL
);


--
-- Name: nodes_node_ref_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.nodes ALTER COLUMN node_ref ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.nodes_node_ref_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: payloads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payloads (
    payload_id bigint NOT NULL,
    task_ref bigint NOT NULL,
    body text NOT NULL
);


--
-- Name: payloads_payload_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.payloads ALTER COLUMN payload_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.payloads_payload_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_version (
    version integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: seq_above; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.seq_above (
    node_ref bigint NOT NULL,
    seq bigint NOT NULL,
    at bigint NOT NULL
);


--
-- Name: task_deps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_deps (
    task_ref bigint NOT NULL,
    dep_ref bigint NOT NULL
);


--
-- Name: task_nodes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_nodes (
    task_ref bigint NOT NULL,
    node_ref bigint NOT NULL,
    state integer NOT NULL,
    version bigint NOT NULL,
    attempt bigint NOT NULL,
    retries integer NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    due_kind integer NOT NULL,
    due_at bigint,
    last_error text DEFAULT ''::text NOT NULL,
    result text DEFAULT ''::text NOT NULL,
    result_ref bigint,
    blocked_reason text DEFAULT ''::text NOT NULL
);


--
-- Name: task_status; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_status (
    task_ref bigint NOT NULL,
    status integer NOT NULL,
    updated_at bigint NOT NULL,
    settled_at bigint
);


--
-- Name: tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tasks (
    task_ref bigint NOT NULL,
    task_id text NOT NULL,
    intent text NOT NULL,
    spec text NOT NULL,
    priority integer NOT NULL,
    timeout_us bigint NOT NULL,
    max_retries integer NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: tasks_task_ref_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.tasks ALTER COLUMN task_ref ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.tasks_task_ref_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Data for Name: alerts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.alerts (alert_id, kind, task_id, node_id, from_state, to_state, event_id, detail, at) FROM stdin;
1	unknown_task	zz	n2	\N	\N	n2-6	no task zz on node n2	1764000003000000
2	circuit_open			\N	\N		collect_metrics: 5 failures	1764000003000000
\.


--
-- Data for Name: dead_letters; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.dead_letters (letter_id, event_json, reason, deliveries, parked_at) FROM stdin;
1	{"attempt":1,"event_id":"n1-9","event_type":"SUCCEEDED","node_id":"n1","payload":null,"sequence_number":9,"task_id":"a","timestamp":"2025-11-24T16:00:00.000000Z","timestamp_us":1764000000000000}	poison	5	1764000003000000
\.


--
-- Data for Name: history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.history (hist_id, task_ref, node_ref, cause, outcome, seq, event_type, attempt, from_state, to_state, version, at, detail, payload, payload_ref) FROM stdin;
1	1	1	9	0	\N	\N	0	0	0	1	1764000000000000			\N
2	2	1	9	0	\N	\N	0	0	0	1	1764000000000000	deps_pending [a]		\N
3	2	2	9	0	\N	\N	0	0	0	1	1764000000000000	deps_pending [a]		\N
4	3	5	9	0	\N	\N	0	0	0	1	1764000000000000	node_not_registered		\N
5	4	2	9	0	\N	\N	0	0	0	1	1764000000000000			\N
6	5	1	9	0	\N	\N	0	0	0	1	1764000000000000	deps_pending [c]		\N
7	1	1	2	0	\N	\N	1	0	1	2	1764000001000000			\N
8	4	2	2	0	\N	\N	1	0	1	2	1764000001000000			\N
9	1	1	1	0	1	1	1	1	2	3	1764000002000000			\N
10	1	1	1	0	2	3	1	2	3	4	1764000002000000			2
11	4	2	1	0	1	1	1	1	2	3	1764000003000000			\N
12	4	2	1	0	2	4	1	2	4	4	1764000003000000		{"error":"disk full"}	\N
13	4	2	1	0	5	2	1	4	4	4	1764000003000000		{"pct":50}	\N
\.


--
-- Data for Name: node_seq; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.node_seq (node_ref, hwm, n_above) FROM stdin;
5	0	0
1	2	0
2	2	2
\.


--
-- Data for Name: nodes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.nodes (node_ref, node_id, registered, labels, groups_json, intents_json, mode, agent_version, last_heartbeat, updated_at) FROM stdin;
2	n2	t	{"role":"db"}	[]	["collect_metrics"]	normal	0.1.0	1764000000000000	1764000000000000
5	n3	f	{}	[]	[]			\N	1764000000000000
1	n1	t	{"role":"web"}	["g1"]	["collect_metrics","exec"]	normal	0.1.0	1764000003000000	1764000003000000
\.


--
-- Data for Name: payloads; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.payloads (payload_id, task_ref, body) FROM stdin;
1	1	{"out":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}
2	1	{"out":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}
\.


--
-- Data for Name: schema_version; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_version (version, applied_at) FROM stdin;
1	2026-12-01 01:43:55.140506+00
\.


--
-- Data for Name: seq_above; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.seq_above (node_ref, seq, at) FROM stdin;
2	5	1764000003000000
2	6	1764000003000000
\.


--
-- Data for Name: task_deps; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.task_deps (task_ref, dep_ref) FROM stdin;
2	1
5	3
\.


--
-- Data for Name: task_nodes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.task_nodes (task_ref, node_ref, state, version, attempt, retries, created_at, updated_at, due_kind, due_at, last_error, result, result_ref, blocked_reason) FROM stdin;
3	5	0	1	0	0	1764000000000000	1764000000000000	1	1764000000000000			\N	node_not_registered
5	1	0	1	0	0	1764000000000000	1764000000000000	0	\N			\N	deps_pending [c]
1	1	3	4	1	0	1764000000000000	1764000002000000	0	\N			1	
2	1	0	1	0	0	1764000000000000	1764000000000000	1	1764000002000000			\N	
2	2	0	1	0	0	1764000000000000	1764000000000000	1	1764000002000000			\N	
4	2	4	4	1	0	1764000000000000	1764000003000000	5	1764000003000000	disk full		\N	
\.


--
-- Data for Name: task_status; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.task_status (task_ref, status, updated_at, settled_at) FROM stdin;
2	0	1764000000000000	\N
3	0	1764000000000000	\N
5	0	1764000000000000	\N
1	3	1764000002000000	1764000002000000
4	4	1764000003000000	\N
\.


--
-- Data for Name: tasks; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tasks (task_ref, task_id, intent, spec, priority, timeout_us, max_retries, created_at) FROM stdin;
1	a	collect_metrics	{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1"],"type":"nodes"},"task_id":"a","timeout":60}	1	60000000	2	1764000000000000
2	b	collect_metrics	{"callback_url":"","depends_on":["a"],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1","n2"],"type":"nodes"},"task_id":"b","timeout":60}	1	60000000	2	1764000000000000
3	c	collect_metrics	{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n3"],"type":"nodes"},"task_id":"c","timeout":60}	1	60000000	2	1764000000000000
4	d	collect_metrics	{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n2"],"type":"nodes"},"task_id":"d","timeout":60}	1	60000000	2	1764000000000000
5	f	collect_metrics	{"callback_url":"","depends_on":["c"],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1"],"type":"nodes"},"task_id":"f","timeout":60}	1	60000000	2	1764000000000000
\.


--
-- Name: alerts_alert_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.alerts_alert_id_seq', 2, true);


--
-- Name: dead_letters_letter_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.dead_letters_letter_id_seq', 1, true);


--
-- Name: history_hist_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.history_hist_id_seq', 13, true);


--
-- Name: nodes_node_ref_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.nodes_node_ref_seq', 5, true);


--
-- Name: payloads_payload_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.payloads_payload_id_seq', 2, true);


--
-- Name: tasks_task_ref_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tasks_task_ref_seq', 5, true);


--
-- Name: alerts alerts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alerts
    ADD CONSTRAINT alerts_pkey PRIMARY KEY (alert_id);


--
-- Name: dead_letters dead_letters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (letter_id);


--
-- Name: history history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.history
    ADD CONSTRAINT history_pkey PRIMARY KEY (task_ref, hist_id);


--
-- Name: node_seq node_seq_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.node_seq
    ADD CONSTRAINT node_seq_pkey PRIMARY KEY (node_ref);


--
-- Name: nodes nodes_node_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_node_id_key UNIQUE (node_id);


--
-- Name: nodes nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.nodes
    ADD CONSTRAINT nodes_pkey PRIMARY KEY (node_ref);


--
-- Name: payloads payloads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (payload_id);


--
-- Name: schema_version schema_version_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);


--
-- Name: seq_above seq_above_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.seq_above
    ADD CONSTRAINT seq_above_pkey PRIMARY KEY (node_ref, seq);


--
-- Name: task_deps task_deps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_deps
    ADD CONSTRAINT task_deps_pkey PRIMARY KEY (task_ref, dep_ref);


--
-- Name: task_nodes task_nodes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_nodes
    ADD CONSTRAINT task_nodes_pkey PRIMARY KEY (task_ref, node_ref);


--
-- Name: task_status task_status_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_status
    ADD CONSTRAINT task_status_pkey PRIMARY KEY (task_ref);


--
-- Name: tasks tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (task_ref);


--
-- Name: tasks tasks_task_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_task_id_key UNIQUE (task_id);


--
-- Name: alerts_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX alerts_by_time ON public.alerts USING btree (at);


--
-- Name: payloads_by_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payloads_by_task ON public.payloads USING btree (task_ref);


--
-- Name: task_deps_rev; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_deps_rev ON public.task_deps USING btree (dep_ref, task_ref);


--
-- Name: task_nodes_by_node; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_nodes_by_node ON public.task_nodes USING btree (node_ref, task_ref);


--
-- Name: task_nodes_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_nodes_due ON public.task_nodes USING btree (due_at) WHERE (due_at IS NOT NULL);


--
-- Name: task_status_by_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_status_by_status ON public.task_status USING btree (status, task_ref);


--
-- Name: task_status_settled; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX task_status_settled ON public.task_status USING btree (settled_at) WHERE (settled_at IS NOT NULL);


--
-- Name: tasks_by_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_by_created ON public.tasks USING btree (created_at);


--
-- Name: tasks_by_intent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tasks_by_intent ON public.tasks USING btree (intent, task_ref);


--
-- PostgreSQL database dump complete
--

\unrestrict Nd1Kjkxe2mlY7YipLR6MUR04MA76NoF3KzxDv1pcOq2f6nMPuoaNeYZVLo1AjzZ

