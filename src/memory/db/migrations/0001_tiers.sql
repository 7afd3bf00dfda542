-- 0001: the memory tiers, their roles and their row-level security.
--
-- Scope travels as transaction-local settings (set_config(..., true)) made by
-- src/memory/scope.ts from a verified credential. A missing setting reads as ''
-- after a transaction ends, so every accessor goes through nullif(..., '') and a
-- missing scope matches nothing.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA memory;

-- Roles are cluster-wide and may already exist (another database, a concurrent migrator).
DO $$ BEGIN
  CREATE ROLE memory_runtime NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN
  CREATE ROLE memory_admin NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;

GRANT USAGE ON SCHEMA memory TO memory_runtime, memory_admin;

-- Scope accessors. SQL, STABLE and SECURITY INVOKER. Policies call them as scalar subqueries,
-- `(SELECT memory.scope_game())`: an InitPlan evaluated once per statement (not once per row),
-- usable as an index condition.
CREATE FUNCTION memory.scope_tenant() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT nullif(current_setting('memory.tenant', true), '')::uuid $$;
CREATE FUNCTION memory.scope_game() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT nullif(current_setting('memory.game', true), '') $$;
CREATE FUNCTION memory.scope_npc() RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT nullif(current_setting('memory.npc', true), '') $$;
CREATE FUNCTION memory.scope_participants() RETURNS text[] LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT string_to_array(nullif(current_setting('memory.participants', true), ''), ',') $$;

-- Operators of the memory service and their API keys (only a hash of the secret is stored).
CREATE TABLE memory.tenants (
  tenant_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memory.api_keys (
  key_id      text PRIMARY KEY,
  tenant_id   uuid NOT NULL REFERENCES memory.tenants,
  secret_hash text NOT NULL,
  role        text NOT NULL CHECK (role IN ('runtime', 'admin')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

-- One row per game the memory service has heard of; the parent of every game-bound row.
CREATE TABLE memory.games (
  tenant_id  uuid NOT NULL REFERENCES memory.tenants,
  game_id    text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  ended_at   timestamptz,
  PRIMARY KEY (tenant_id, game_id)
);

-- Data-key records: a data key wrapped by a key-encryption key that lives in the keyring,
-- outside PostgreSQL. Destroying the keyring entry shreds everything under the data key.
CREATE TABLE memory.data_keys (
  tenant_id    uuid NOT NULL REFERENCES memory.tenants,
  key_id       uuid NOT NULL DEFAULT gen_random_uuid(),
  scope_kind   text NOT NULL CHECK (scope_kind IN ('game', 'participant', 'npc')),
  scope_ref    text NOT NULL,
  kek_ref      text NOT NULL,
  wrapped      bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  destroyed_at timestamptz,
  PRIMARY KEY (tenant_id, key_id),
  UNIQUE (tenant_id, scope_kind, scope_ref)
);

-- Procedural memory: versioned persona and directives, written by admins only.
CREATE TABLE memory.procedural (
  tenant_id  uuid NOT NULL REFERENCES memory.tenants,
  npc_id     text NOT NULL,
  version    integer NOT NULL CHECK (version > 0),
  persona    text NOT NULL,
  directives jsonb NOT NULL DEFAULT '[]',
  core       jsonb NOT NULL DEFAULT '{}',
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  lineage    jsonb,
  PRIMARY KEY (tenant_id, npc_id, version)
);

-- Episodic memory: append-only, bound to game, npc and participant.
CREATE TABLE memory.episodic (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL,
  game_id        text NOT NULL,
  npc_id         text NOT NULL,
  room_id        text NOT NULL,
  participant_id text NOT NULL,
  ts             bigint NOT NULL,
  targeted       boolean NOT NULL DEFAULT false,
  source         text NOT NULL DEFAULT 'player_statement'
                 CHECK (source IN ('player_statement', 'npc_observation', 'verified_game_event', 'clone')),
  importance     real NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  embedding      vector(384),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id)
);
CREATE UNIQUE INDEX episodic_id ON memory.episodic (id);
CREATE INDEX episodic_scope ON memory.episodic (tenant_id, game_id, npc_id, ts);

-- The four fact tiers share one shape: a structured fact (key in the clear, value and
-- summary encrypted), provenance, retention, supersession and clone lineage.
-- Semantic game clues: bound to game and npc.
CREATE TABLE memory.clues (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL,
  game_id        text NOT NULL,
  npc_id         text NOT NULL,
  fact_key       text NOT NULL,
  source         text NOT NULL CHECK (source IN ('player_statement', 'npc_observation', 'verified_game_event', 'clone')),
  confidence     real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance     real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  retention      text NOT NULL CHECK (retention IN ('permanent', 'slow_decay', 'session_only', 'immediate_only')),
  supersedes     uuid,
  superseded_at  timestamptz,
  invalidated_at timestamptz,
  derived_from   uuid[] NOT NULL DEFAULT '{}',
  lineage        jsonb,
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  embedding      vector(384),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id),
  FOREIGN KEY (tenant_id, game_id, supersedes) REFERENCES memory.clues (tenant_id, game_id, id) ON DELETE SET NULL (supersedes)
);
CREATE UNIQUE INDEX clues_id ON memory.clues (id);
CREATE INDEX clues_scope ON memory.clues (tenant_id, game_id, npc_id, fact_key);

-- Semantic social memory: bound to npc and participant, no game column at all.
CREATE TABLE memory.social (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL,
  npc_id         text NOT NULL,
  participant_id text NOT NULL,
  fact_key       text NOT NULL,
  source         text NOT NULL CHECK (source IN ('player_statement', 'npc_observation', 'verified_game_event', 'clone')),
  confidence     real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance     real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  retention      text NOT NULL CHECK (retention IN ('permanent', 'slow_decay', 'session_only', 'immediate_only')),
  supersedes     uuid,
  superseded_at  timestamptz,
  invalidated_at timestamptz,
  derived_from   uuid[] NOT NULL DEFAULT '{}',
  lineage        jsonb,
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  embedding      vector(384),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, npc_id, participant_id, id),
  FOREIGN KEY (tenant_id) REFERENCES memory.tenants,
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id),
  FOREIGN KEY (tenant_id, npc_id, participant_id, supersedes)
    REFERENCES memory.social (tenant_id, npc_id, participant_id, id) ON DELETE SET NULL (supersedes)
);
CREATE UNIQUE INDEX social_id ON memory.social (id);
CREATE INDEX social_scope ON memory.social (tenant_id, npc_id, participant_id, fact_key);

-- General lore: non-private world facts, bound to npc only.
CREATE TABLE memory.lore (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL,
  npc_id         text NOT NULL,
  fact_key       text NOT NULL,
  source         text NOT NULL CHECK (source IN ('player_statement', 'npc_observation', 'verified_game_event', 'clone')),
  confidence     real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance     real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  retention      text NOT NULL CHECK (retention IN ('permanent', 'slow_decay', 'session_only', 'immediate_only')),
  supersedes     uuid,
  superseded_at  timestamptz,
  invalidated_at timestamptz,
  derived_from   uuid[] NOT NULL DEFAULT '{}',
  lineage        jsonb,
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  embedding      vector(384),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, npc_id, id),
  FOREIGN KEY (tenant_id) REFERENCES memory.tenants,
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id),
  FOREIGN KEY (tenant_id, npc_id, supersedes) REFERENCES memory.lore (tenant_id, npc_id, id) ON DELETE SET NULL (supersedes)
);
CREATE UNIQUE INDEX lore_id ON memory.lore (id);
CREATE INDEX lore_scope ON memory.lore (tenant_id, npc_id, fact_key);

-- Anonymous fragments: generalized anonymous chatter, bound to npc only, no identifier.
CREATE TABLE memory.fragments (
  id             uuid NOT NULL,
  tenant_id      uuid NOT NULL,
  npc_id         text NOT NULL,
  fact_key       text NOT NULL,
  source         text NOT NULL CHECK (source IN ('player_statement', 'npc_observation', 'verified_game_event', 'clone')),
  confidence     real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance     real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  retention      text NOT NULL CHECK (retention IN ('permanent', 'slow_decay', 'session_only', 'immediate_only')),
  supersedes     uuid,
  superseded_at  timestamptz,
  invalidated_at timestamptz,
  derived_from   uuid[] NOT NULL DEFAULT '{}',
  lineage        jsonb,
  key_id         uuid NOT NULL,
  ciphertext     bytea NOT NULL,
  embedding      vector(384),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, npc_id, id),
  FOREIGN KEY (tenant_id) REFERENCES memory.tenants,
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id),
  FOREIGN KEY (tenant_id, npc_id, supersedes) REFERENCES memory.fragments (tenant_id, npc_id, id) ON DELETE SET NULL (supersedes)
);
CREATE UNIQUE INDEX fragments_id ON memory.fragments (id);
CREATE INDEX fragments_scope ON memory.fragments (tenant_id, npc_id, fact_key);

-- Ingest idempotency: one row per accepted batch, holding the answer a retry gets.
CREATE TABLE memory.ingest_requests (
  tenant_id       uuid NOT NULL,
  game_id         text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  response        jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, idempotency_key),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id)
);

-- Row-level security: enabled and forced on every table the runtime touches.
ALTER TABLE memory.tenants         ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.api_keys        ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.games           ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.data_keys       ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.procedural      ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.episodic        ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.clues           ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.social          ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.lore            ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.fragments       ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.ingest_requests ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- Credentials: the runtime may read exactly the key whose id the request presented.
CREATE POLICY api_key_presented ON memory.api_keys TO memory_runtime
  USING (key_id = nullif(current_setting('memory.key_id', true), ''));
CREATE POLICY tenant_own ON memory.tenants TO memory_runtime, memory_admin
  USING (tenant_id = (SELECT memory.scope_tenant()));

CREATE POLICY game_scope ON memory.games TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()));

CREATE POLICY data_key_scope ON memory.data_keys TO memory_runtime, memory_admin
  USING (tenant_id = (SELECT memory.scope_tenant()) AND (
        (scope_kind = 'game' AND scope_ref = (SELECT memory.scope_game()))
     OR (scope_kind = 'participant' AND scope_ref = ANY ((SELECT memory.scope_participants())::text[]))
     OR (scope_kind = 'npc' AND scope_ref = (SELECT memory.scope_npc()))))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND (
        (scope_kind = 'game' AND scope_ref = (SELECT memory.scope_game()))
     OR (scope_kind = 'participant' AND scope_ref = ANY ((SELECT memory.scope_participants())::text[]))
     OR (scope_kind = 'npc' AND scope_ref = (SELECT memory.scope_npc()))));

CREATE POLICY procedural_read ON memory.procedural TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()));
CREATE POLICY procedural_admin ON memory.procedural TO memory_admin
  USING (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()));

CREATE POLICY episodic_scope ON memory.episodic TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()));

CREATE POLICY clue_scope ON memory.clues TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()));

CREATE POLICY social_scope ON memory.social TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc())
         AND participant_id = ANY ((SELECT memory.scope_participants())::text[]))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc())
         AND participant_id = ANY ((SELECT memory.scope_participants())::text[]));

CREATE POLICY lore_scope ON memory.lore TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()));

CREATE POLICY fragment_scope ON memory.fragments TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND npc_id = (SELECT memory.scope_npc()));

CREATE POLICY ingest_scope ON memory.ingest_requests TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()));

-- Privileges: episodic is append-only and procedural read-only for the runtime.
GRANT SELECT ON memory.tenants, memory.api_keys TO memory_runtime;
GRANT SELECT ON memory.tenants TO memory_admin;
GRANT SELECT, INSERT ON memory.games, memory.data_keys, memory.ingest_requests TO memory_runtime;
GRANT SELECT, INSERT ON memory.data_keys TO memory_admin;
GRANT SELECT ON memory.procedural TO memory_runtime;
GRANT SELECT, INSERT ON memory.procedural TO memory_admin;
GRANT SELECT, INSERT ON memory.episodic TO memory_runtime;
GRANT SELECT, INSERT, UPDATE, DELETE ON memory.clues, memory.social, memory.lore, memory.fragments TO memory_runtime;
