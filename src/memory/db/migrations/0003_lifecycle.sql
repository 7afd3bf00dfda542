-- 0003: the memory lifecycle: the consolidation job queue, game secrets (the clue firewall),
-- poisoning anomalies, game end as a policy condition, shredding and erasure.
--
-- Two more roles, neither of which a request's credential ever selects directly:
-- - memory_worker: claims and finishes queue jobs of every tenant. It can touch
--   memory.jobs (and see which games have ended, to sweep them) and nothing else; each job's
--   work then runs in a scoped transaction as memory_runtime with the job's own scope.
-- - memory_lifecycle: acts for exactly one tenant (scope_tenant) to end a game, shred it after
--   the audit window, or erase a participant. It may clear embeddings (UPDATE of that one
--   column, and only to NULL), mark keys destroyed, and delete; it can insert no memory.
-- The login role the service connects as must be a member of all four memory roles.

DO $$ BEGIN
  CREATE ROLE memory_worker NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN
  CREATE ROLE memory_lifecycle NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT USAGE ON SCHEMA memory TO memory_worker, memory_lifecycle;

-- When the game's key was destroyed and its rows purged (after ended_at + audit window).
ALTER TABLE memory.games ADD COLUMN shredded_at timestamptz;

-- The erased-subject record: a hash of (tenant, participant), never the id itself.
CREATE FUNCTION memory.subject_hash(tenant uuid, participant text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT encode(sha256(convert_to(tenant::text || ':' || participant, 'UTF8')), 'hex') $$;

CREATE TABLE memory.erased_subjects (
  tenant_id    uuid NOT NULL REFERENCES memory.tenants,
  subject      text NOT NULL CHECK (subject ~ '^[0-9a-f]{64}$'),
  erased_at    timestamptz NOT NULL DEFAULT now(),
  receipt_hash text,
  PRIMARY KEY (tenant_id, subject)
);

-- The job queue. One queued job per (tenant, kind, game, npc) at a time: repeated triggers
-- coalesce into it. A running job holds a lease (locked_until); a worker that dies leaves the
-- job to be claimed again once the lease runs out.
CREATE TABLE memory.jobs (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES memory.tenants,
  kind         text NOT NULL CHECK (kind IN ('consolidate', 'shred')),
  game_id      text NOT NULL,
  npc_id       text NOT NULL DEFAULT '',
  reason       text NOT NULL CHECK (reason IN ('ingest', 'suspension', 'npc_moved', 'game_end', 'manual', 'audit_window')),
  state        text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'dead')),
  attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts integer NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
  run_at       timestamptz NOT NULL DEFAULT now(),
  locked_by    text,
  locked_until timestamptz,
  last_error   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id)
);
CREATE UNIQUE INDEX jobs_queued_once ON memory.jobs (tenant_id, kind, game_id, npc_id) WHERE state = 'queued';
CREATE INDEX jobs_due ON memory.jobs (run_at) WHERE state IN ('queued', 'running');

-- Which episodes consolidation has already turned into facts (written in the same transaction
-- as the facts, so a retried job skips them and never writes a fact twice).
CREATE TABLE memory.consolidated_episodes (
  tenant_id       uuid NOT NULL,
  game_id         text NOT NULL,
  npc_id          text NOT NULL,
  episode_id      uuid NOT NULL,
  consolidated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, npc_id, episode_id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id)
);

-- Game secrets registered by the engine, sealed under the game key; game-bound like clues.
CREATE TABLE memory.game_secrets (
  tenant_id  uuid NOT NULL,
  game_id    text NOT NULL,
  id         uuid NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('code', 'item_location', 'solution', 'password')),
  key_id     uuid NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id)
);

-- Poisoning attempts discarded by consolidation, for review. The claim is sealed under the
-- npc key; text_hash groups repetitions without decrypting.
CREATE TABLE memory.anomalies (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL REFERENCES memory.tenants,
  npc_id         text NOT NULL,
  game_id        text NOT NULL,
  participant_id text,
  episode_id     uuid NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('contradicts_core', 'persona_rewrite', 'false_world_rule')),
  core_key       text,
  text_hash      text NOT NULL,
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, npc_id, id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id)
);
CREATE INDEX anomalies_game ON memory.anomalies (tenant_id, game_id);
CREATE INDEX anomalies_participant ON memory.anomalies (tenant_id, participant_id);

ALTER TABLE memory.erased_subjects       ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.jobs                  ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.consolidated_episodes ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.game_secrets          ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.anomalies             ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- Game end: from the moment memory.games.ended_at is set, the runtime sees none of the game's
-- episodic rows, clues or secrets. The test is uncorrelated (it names the scope's game, which
-- the other conditions already require the row to be in), so it runs once per statement.
ALTER POLICY episodic_scope ON memory.episodic
  USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL))
  WITH CHECK (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL));

ALTER POLICY clue_scope ON memory.clues
  USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL))
  WITH CHECK (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL));

CREATE POLICY game_secret_scope ON memory.game_secrets TO memory_runtime
  USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL))
  WITH CHECK (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game()
         AND EXISTS (SELECT 1 FROM memory.games g
                     WHERE g.tenant_id = memory.scope_tenant() AND g.game_id = memory.scope_game() AND g.ended_at IS NULL));

CREATE POLICY consolidated_scope ON memory.consolidated_episodes TO memory_runtime
  USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc())
  WITH CHECK (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game() AND npc_id = memory.scope_npc());

-- Erasure: once a subject is recorded, no episode, social fact or participant key can be
-- written for it again, whatever the application does (restrictive: ANDed with the scope).
CREATE POLICY erased_visible ON memory.erased_subjects FOR SELECT TO memory_runtime, memory_admin
  USING (tenant_id = memory.scope_tenant());
CREATE POLICY episodic_not_erased ON memory.episodic AS RESTRICTIVE FOR INSERT TO memory_runtime
  WITH CHECK (NOT EXISTS (SELECT 1 FROM memory.erased_subjects e
                          WHERE e.tenant_id = episodic.tenant_id
                            AND e.subject = memory.subject_hash(episodic.tenant_id, episodic.participant_id)));
CREATE POLICY social_not_erased ON memory.social AS RESTRICTIVE FOR INSERT TO memory_runtime, memory_admin
  WITH CHECK (NOT EXISTS (SELECT 1 FROM memory.erased_subjects e
                          WHERE e.tenant_id = social.tenant_id
                            AND e.subject = memory.subject_hash(social.tenant_id, social.participant_id)));
CREATE POLICY data_key_not_erased ON memory.data_keys AS RESTRICTIVE FOR INSERT TO memory_runtime, memory_admin
  WITH CHECK (scope_kind <> 'participant' OR NOT EXISTS (
                SELECT 1 FROM memory.erased_subjects e
                WHERE e.tenant_id = data_keys.tenant_id
                  AND e.subject = memory.subject_hash(data_keys.tenant_id, data_keys.scope_ref)));

-- The runtime enqueues jobs of its own tenant (in the same transaction as the episodes that
-- call for them) and may read their state; it cannot claim, finish or see another tenant's.
CREATE POLICY job_enqueue ON memory.jobs TO memory_runtime
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND state = 'queued' AND attempts = 0);
CREATE POLICY job_worker ON memory.jobs TO memory_worker USING (true) WITH CHECK (true);
CREATE POLICY game_sweep ON memory.games FOR SELECT TO memory_worker USING (ended_at IS NOT NULL);

-- Anomalies: appended by consolidation (runtime, npc scope), read by admins of that npc.
CREATE POLICY anomaly_append ON memory.anomalies TO memory_runtime
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc())
  WITH CHECK (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY anomaly_review ON memory.anomalies FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());

-- The lifecycle role: one tenant at a time; its statements name the game or participant.
CREATE POLICY game_lifecycle ON memory.games TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game())
  WITH CHECK (tenant_id = memory.scope_tenant() AND game_id = memory.scope_game());
CREATE POLICY data_key_lifecycle ON memory.data_keys TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND destroyed_at IS NOT NULL);
CREATE POLICY episodic_lifecycle ON memory.episodic TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND embedding IS NULL);
CREATE POLICY clue_lifecycle ON memory.clues TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND embedding IS NULL);
CREATE POLICY social_lifecycle ON memory.social TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY lore_lifecycle ON memory.lore TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY fragment_lifecycle ON memory.fragments TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY ingest_lifecycle ON memory.ingest_requests TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY secret_lifecycle ON memory.game_secrets TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY consolidated_lifecycle ON memory.consolidated_episodes TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY anomaly_lifecycle ON memory.anomalies TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY erased_lifecycle ON memory.erased_subjects TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY job_lifecycle ON memory.jobs TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND state = 'queued' AND attempts = 0);

GRANT SELECT ON memory.erased_subjects TO memory_runtime, memory_admin;
GRANT SELECT, INSERT ON memory.jobs TO memory_runtime;
GRANT SELECT, INSERT ON memory.consolidated_episodes TO memory_runtime;
GRANT SELECT, INSERT, DELETE ON memory.game_secrets TO memory_runtime;
GRANT INSERT ON memory.anomalies TO memory_runtime;
GRANT SELECT ON memory.anomalies TO memory_admin;

GRANT SELECT, INSERT, UPDATE, DELETE ON memory.jobs TO memory_worker;
GRANT SELECT ON memory.games TO memory_worker;

GRANT SELECT, INSERT ON memory.games TO memory_lifecycle;
GRANT UPDATE (ended_at, shredded_at) ON memory.games TO memory_lifecycle;
GRANT SELECT, DELETE ON memory.data_keys TO memory_lifecycle;
GRANT UPDATE (destroyed_at) ON memory.data_keys TO memory_lifecycle;
GRANT SELECT, DELETE ON memory.episodic, memory.clues TO memory_lifecycle;
GRANT UPDATE (embedding) ON memory.episodic, memory.clues TO memory_lifecycle;
GRANT SELECT, DELETE ON memory.social, memory.lore, memory.fragments, memory.ingest_requests,
  memory.game_secrets, memory.consolidated_episodes, memory.anomalies TO memory_lifecycle;
GRANT SELECT, INSERT ON memory.erased_subjects TO memory_lifecycle;
GRANT UPDATE (receipt_hash) ON memory.erased_subjects TO memory_lifecycle;
GRANT SELECT, INSERT ON memory.jobs TO memory_lifecycle;

-- Working memory and the context log (migration 0002) are game-bound too: purged at shredding,
-- and working memory that quotes an erased participant is dropped at erasure.
CREATE POLICY working_lifecycle ON memory.working TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
CREATE POLICY context_log_lifecycle ON memory.context_log TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (false);
GRANT SELECT, DELETE ON memory.working, memory.context_log TO memory_lifecycle;
