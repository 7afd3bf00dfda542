-- 0004: the audit ledger, admin principals with attributes, consent to cloning, and clone lineage.
--
-- Every table here has row-level security forced; every policy is scoped by tenant
-- (memory.scope_tenant()) and, where it reads tier rows, by npc. No SECURITY DEFINER anywhere.

-- ---------------------------------------------------------------------------------------------
-- The audit ledger: append-only, hash-chained per tenant (src/memory/audit/ledger.ts).
-- Each record's hash covers the previous record's hash and a canonical JSON of the record, so
-- verification checks every link. Appends are serialized per tenant by an advisory lock; the
-- primary key keeps the chain linear even if a writer skipped the lock.
CREATE TABLE memory.audit_ledger (
  tenant_id   uuid NOT NULL REFERENCES memory.tenants,
  seq         bigint NOT NULL CHECK (seq > 0),
  recorded_at timestamptz NOT NULL,
  action      text NOT NULL CHECK (action ~ '^[a-z][a-z_]{0,39}$'),
  actor       text NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  subject     text NOT NULL CHECK (length(subject) BETWEEN 1 AND 400),
  details     jsonb NOT NULL,
  prev_hash   text NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash        text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  PRIMARY KEY (tenant_id, seq)
);

-- Refuses UPDATE, DELETE and TRUNCATE for everyone, the owner included (a superuser can still
-- disable the trigger: that is what the hash chain and the exported checkpoints are for).
CREATE FUNCTION memory.audit_ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'memory.audit_ledger is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_ledger_no_rewrite BEFORE UPDATE OR DELETE ON memory.audit_ledger
  FOR EACH ROW EXECUTE FUNCTION memory.audit_ledger_refuse_change();
CREATE TRIGGER audit_ledger_no_truncate BEFORE TRUNCATE ON memory.audit_ledger
  FOR EACH STATEMENT EXECUTE FUNCTION memory.audit_ledger_refuse_change();

-- ---------------------------------------------------------------------------------------------
-- Admin principals (attribute-based access control, src/memory/admin/principals.ts): one admin
-- API key, its tenant, the NPCs it may act on ('*' = all) and the actions it may take.
ALTER TABLE memory.api_keys ADD CONSTRAINT api_keys_key_tenant UNIQUE (key_id, tenant_id);

CREATE TABLE memory.admin_principals (
  tenant_id  uuid NOT NULL REFERENCES memory.tenants,
  key_id     text NOT NULL UNIQUE,
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  npcs       text[] NOT NULL CHECK (cardinality(npcs) > 0),
  actions    text[] NOT NULL
             CHECK (actions <@ ARRAY['clone', 'invalidate', 'erase', 'write_procedural', 'end_game', 'audit']::text[]),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, key_id),
  -- A principal's tenant is its key's tenant: attributes can never name another tenant.
  FOREIGN KEY (key_id, tenant_id) REFERENCES memory.api_keys (key_id, tenant_id)
);

-- ---------------------------------------------------------------------------------------------
-- Consent to cloning (src/memory/cloning/consent.ts). Only the signed token counts; the other
-- columns are for listing. A revocation is a row of its own and cannot be undone by the runtime.
CREATE TABLE memory.consents (
  tenant_id      uuid NOT NULL REFERENCES memory.tenants,
  consent_id     uuid NOT NULL,
  participant_id text NOT NULL,
  source_npc     text NOT NULL,
  target_npc     text NOT NULL,
  purpose        text NOT NULL,
  token          text NOT NULL,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, consent_id)
);
CREATE INDEX consents_source ON memory.consents (tenant_id, source_npc);

CREATE TABLE memory.consent_revocations (
  tenant_id      uuid NOT NULL REFERENCES memory.tenants,
  consent_id     uuid NOT NULL,
  participant_id text NOT NULL,
  revoked_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, consent_id)
);

-- ---------------------------------------------------------------------------------------------
-- Clone lineage index (src/memory/cloning/store.ts). The authoritative marker is the `lineage`
-- column of each cloned row; these tables let a trace follow clones of clones across NPCs.
CREATE TABLE memory.clone_operations (
  tenant_id      uuid NOT NULL REFERENCES memory.tenants,
  operation_id   uuid NOT NULL,
  source_npc     text NOT NULL,
  target_npc     text NOT NULL,
  actor          text NOT NULL,
  tool_version   text NOT NULL,
  manifest       jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  invalidated_at timestamptz,
  PRIMARY KEY (tenant_id, operation_id)
);

CREATE TABLE memory.clone_rows (
  tenant_id      uuid NOT NULL,
  operation_id   uuid NOT NULL,
  tier           text NOT NULL CHECK (tier IN ('procedural', 'social', 'lore')),
  -- A fact row's uuid, or 'procedural:<npc>:<version>'.
  row_id         text NOT NULL,
  npc_id         text NOT NULL,
  participant_id text,
  source_npc     text NOT NULL,
  source_row_id  text NOT NULL,
  PRIMARY KEY (tenant_id, operation_id, row_id),
  FOREIGN KEY (tenant_id, operation_id) REFERENCES memory.clone_operations (tenant_id, operation_id)
);
CREATE INDEX clone_rows_source ON memory.clone_rows (tenant_id, source_row_id);

-- Procedural versions produced by a clone can be invalidated too (they stay for the trace).
ALTER TABLE memory.procedural ADD COLUMN invalidated_at timestamptz;

-- ---------------------------------------------------------------------------------------------
-- Row-level security.
ALTER TABLE memory.audit_ledger        ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.admin_principals    ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.consents            ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.consent_revocations ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.clone_operations    ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.clone_rows          ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

CREATE POLICY audit_read ON memory.audit_ledger FOR SELECT TO memory_runtime, memory_admin
  USING (tenant_id = memory.scope_tenant());
CREATE POLICY audit_append ON memory.audit_ledger FOR INSERT TO memory_runtime, memory_admin
  WITH CHECK (tenant_id = memory.scope_tenant());

-- An admin key reads its own attributes only.
CREATE POLICY principal_own ON memory.admin_principals FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND key_id = nullif(current_setting('memory.key_id', true), ''));

-- The engine records and revokes a participant's consent with a game token covering them.
CREATE POLICY consent_record ON memory.consents FOR INSERT TO memory_runtime
  WITH CHECK (tenant_id = memory.scope_tenant() AND participant_id = ANY (memory.scope_participants()));
CREATE POLICY consent_runtime_read ON memory.consents FOR SELECT TO memory_runtime
  USING (tenant_id = memory.scope_tenant() AND participant_id = ANY (memory.scope_participants()));
CREATE POLICY consent_admin_read ON memory.consents FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND source_npc = memory.scope_npc());
CREATE POLICY revocation_record ON memory.consent_revocations FOR INSERT TO memory_runtime
  WITH CHECK (tenant_id = memory.scope_tenant() AND participant_id = ANY (memory.scope_participants()));
CREATE POLICY revocation_runtime_read ON memory.consent_revocations FOR SELECT TO memory_runtime
  USING (tenant_id = memory.scope_tenant() AND participant_id = ANY (memory.scope_participants()));
CREATE POLICY revocation_admin_read ON memory.consent_revocations FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant());

CREATE POLICY clone_operation_admin ON memory.clone_operations TO memory_admin
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY clone_row_admin ON memory.clone_rows TO memory_admin
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());

-- The cloning pipeline runs as memory_admin, one npc at a time (source, then target). It sees
-- the metadata of the source's rows (to count and report what it blocks); it can decrypt only
-- what the data_keys policy lets it unwrap: the npc's own key and the keys of the participants
-- whose consent verified, never a game key (clues and episodes are never opened).
CREATE POLICY social_admin_read ON memory.social FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY social_admin_insert ON memory.social FOR INSERT TO memory_admin
  WITH CHECK (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc()
              AND participant_id = ANY (memory.scope_participants()));
CREATE POLICY social_admin_invalidate ON memory.social FOR UPDATE TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc())
  WITH CHECK (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY lore_admin_read ON memory.lore FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY lore_admin_insert ON memory.lore FOR INSERT TO memory_admin
  WITH CHECK (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY lore_admin_invalidate ON memory.lore FOR UPDATE TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc())
  WITH CHECK (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY fragment_admin_read ON memory.fragments FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY clue_admin_count ON memory.clues FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());
CREATE POLICY episodic_admin_count ON memory.episodic FOR SELECT TO memory_admin
  USING (tenant_id = memory.scope_tenant() AND npc_id = memory.scope_npc());

-- Privileges. The ledger: SELECT and INSERT only, for both roles; never UPDATE, DELETE, TRUNCATE.
GRANT SELECT, INSERT ON memory.audit_ledger TO memory_runtime, memory_admin;
-- Game end and erasure (0003) run as memory_lifecycle and record themselves in the same transaction.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_lifecycle') THEN
    GRANT SELECT, INSERT ON memory.audit_ledger TO memory_lifecycle;
    CREATE POLICY audit_read_lifecycle ON memory.audit_ledger FOR SELECT TO memory_lifecycle
      USING (tenant_id = memory.scope_tenant());
    CREATE POLICY audit_append_lifecycle ON memory.audit_ledger FOR INSERT TO memory_lifecycle
      WITH CHECK (tenant_id = memory.scope_tenant());
  END IF;
END $$;
GRANT SELECT ON memory.admin_principals TO memory_admin;
GRANT SELECT, INSERT ON memory.consents, memory.consent_revocations TO memory_runtime;
GRANT SELECT ON memory.consents, memory.consent_revocations TO memory_admin;
GRANT SELECT, INSERT ON memory.clone_operations, memory.clone_rows TO memory_admin;
GRANT UPDATE (invalidated_at) ON memory.clone_operations TO memory_admin;
GRANT SELECT, INSERT ON memory.social, memory.lore TO memory_admin;
GRANT UPDATE (invalidated_at, updated_at) ON memory.social, memory.lore TO memory_admin;
GRANT SELECT ON memory.fragments TO memory_admin;
GRANT UPDATE (invalidated_at) ON memory.procedural TO memory_admin;
-- Clues and episodes: the columns needed to count and name blocked rows; never the ciphertext.
GRANT SELECT (id, tenant_id, game_id, npc_id, fact_key) ON memory.clues TO memory_admin;
GRANT SELECT (id, tenant_id, game_id, npc_id) ON memory.episodic TO memory_admin;
