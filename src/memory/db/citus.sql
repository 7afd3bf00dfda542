-- The Citus profile of the schema: run by migrate() after the numbered migrations, only when the
-- citus extension is present, every time (each step skips what is already done, so a table a
-- later migration adds is distributed on the next start).
--
-- Distribution column: tenant_id, for every table that has one, all co-located. One context
-- assembly (every tier of one tenant, game, NPC and the participants present), one ingest, one
-- game end and one erasure each touch one tenant, so each is answered by the one shard holding
-- that tenant; the policies, roles and settings are those of one node. See README, "Citus".
--
-- What Citus cannot take as it is, and what is done instead:
-- - Policies with subqueries (Citus refuses them on distributed tables): the scope accessors are
--   called directly instead of as `(SELECT memory.scope_x())` (the same value), and the two
--   EXISTS checks become functions of their own, reading the co-located shard of the same tenant.
-- - Restrictive policies (Citus would copy them onto shards as permissive ones): folded into the
--   permissive policies they narrow.
-- - Unique keys must include the distribution column: a unique index on (id) alone becomes one
--   on (tenant_id, id) (row ids are random uuids; the tenant is part of every lookup).
-- - Lookups before a tenant is known (an API key by its id) and the tenants themselves are
--   reference tables (small, replicated to every node).
-- - The job queue is claimed across tenants with FOR UPDATE SKIP LOCKED, which Citus does not run
--   across shards: it stays on the coordinator (a Citus local table), without its foreign key to
--   memory.games (a local table cannot reference a distributed one).
-- - A fact's `supersedes` link is not a foreign key (Citus refuses ON DELETE SET NULL on a key that
--   includes the distribution column).
-- - Triggers (the ledger's append-only guard, the embedder column's) run on the shards: Citus takes
--   them only when told to (enable_unsafe_triggers), as they touch no other row.
SET LOCAL citus.enable_unsafe_triggers = on;
SET LOCAL citus.multi_shard_modify_mode = 'sequential';

-- Row-level security reads the scope's settings on the workers: the coordinator must send SET
-- LOCAL on (for the connections opened after this; the node's own configuration should say so
-- too). Only the coordinator needs it, so the statement is not propagated.
SET LOCAL citus.enable_ddl_propagation = off;
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
END $$;
SET LOCAL citus.enable_ddl_propagation = on;

-- Citus runs a statement's shard queries on connections to the workers as the role the statement
-- runs as, so on Citus the memory roles may log in. They have no password: pg_hba.conf decides
-- (on the workers, admit them from the coordinator only). Set on the coordinator, from which
-- Citus copies roles to every node, also to nodes added later.
DO $$
DECLARE r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['memory_runtime', 'memory_admin', 'memory_worker', 'memory_lifecycle', 'memory_reembed'] LOOP
    EXECUTE format('ALTER ROLE %I LOGIN', r);
  END LOOP;
END $$;

-- The checks the policies made with EXISTS, as functions. They query a co-located table of the
-- same tenant from inside a shard's statement, which Citus allows only when told to
-- (allow_nested_distributed_execution): the row is on the same node, in the same transaction.
-- PL/pgSQL, not SQL: Citus cannot plan a statement inside an SQL function that uses its parameters.
CREATE OR REPLACE FUNCTION memory.subject_erased(tenant uuid, participant text) RETURNS boolean
  LANGUAGE plpgsql STABLE SET citus.allow_nested_distributed_execution = on
  AS $$ BEGIN
    RETURN EXISTS (SELECT 1 FROM memory.erased_subjects e
                   WHERE e.tenant_id = tenant AND e.subject = memory.subject_hash(tenant, participant));
  END $$;
-- "The game is still open" as the game's id when it is, NULL when not: a policy says
-- `game_id = memory.open_game(tenant, game)` where it said EXISTS (an open game of that id). The
-- same condition (each policy that asks it also requires game_id = that game, checked below), in a
-- form PostgreSQL plans once per statement: the statement's `game_id = '...'` puts the call in an
-- equivalence class with a constant, so it becomes a one-time filter. A boolean function call in a
-- policy is run for every row instead (PostgreSQL does not hoist a policy's variable-free quals),
-- about 0.1 ms each: 25 ms for a game of 250 lines.
-- It reads the tenant's shard of memory.games on this node (co-located with the shard the policy
-- guards), as the calling role, under its policy. A node without that shard holds no row of the
-- tenant either, so the answer there does not matter: NULL. (Not a query on memory.games itself:
-- nested distributed execution fails inside a statement that spans several shards.)
CREATE OR REPLACE FUNCTION memory.open_game(tenant uuid, game text) RETURNS text
  LANGUAGE plpgsql STABLE
  AS $$
  DECLARE
    shard regclass;
    found text;
  BEGIN
    IF tenant IS NULL OR game IS NULL THEN RETURN NULL; END IF;
    shard := to_regclass(shard_name('memory.games'::regclass, get_shard_id_for_distribution_column('memory.games', tenant)));
    IF shard IS NULL THEN RETURN NULL; END IF;
    EXECUTE format('SELECT game_id FROM %s WHERE tenant_id = $1 AND game_id = $2 AND ended_at IS NULL', shard) INTO found USING tenant, game;
    RETURN found;
  END $$;
GRANT EXECUTE ON FUNCTION memory.subject_erased(uuid, text), memory.open_game(uuid, text) TO PUBLIC;

-- Citus copies a table's policies onto its shards without AS RESTRICTIVE: a restrictive policy
-- would become permissive there, and widen what it should narrow. Each one is folded instead into
-- the permissive policies of its table that it narrows (same command, roles among its roles), and
-- dropped.
DO $$
DECLARE
  r record;
  p record;
BEGIN
  FOR r IN SELECT * FROM pg_policies WHERE pg_policies.schemaname = 'memory' AND pg_policies.permissive = 'RESTRICTIVE' LOOP
    FOR p IN
      SELECT * FROM pg_policies q
      WHERE q.schemaname = 'memory' AND q.tablename = r.tablename AND q.permissive = 'PERMISSIVE'
        AND (q.cmd = 'ALL' OR r.cmd = 'ALL' OR q.cmd = r.cmd) AND q.roles && r.roles
    LOOP
      IF NOT (p.roles <@ r.roles) THEN
        RAISE EXCEPTION 'cannot fold restrictive policy % into % on memory.%: they name different roles', r.policyname, p.policyname, r.tablename;
      END IF;
      EXECUTE format('ALTER POLICY %I ON memory.%I%s%s', p.policyname, p.tablename,
        CASE WHEN r.qual IS NULL OR p.qual IS NULL THEN '' ELSE format(' USING ((%s) AND (%s))', p.qual, r.qual) END,
        CASE WHEN r.with_check IS NULL THEN '' ELSE format(' WITH CHECK ((%s) AND (%s))', coalesce(p.with_check, p.qual), r.with_check) END);
    END LOOP;
    EXECUTE format('DROP POLICY %I ON memory.%I', r.policyname, r.tablename);
  END LOOP;
END $$;

-- Policies without subqueries: the same conditions, rewritten from their deparsed text. (Also
-- policies an earlier profile rewrote to the boolean memory.game_open(), dropped after.)
DO $$
DECLARE
  p record;
  qual text;
  checked text;
  rewritten text;
  open_game text := 'EXISTS \( SELECT 1\s+FROM memory\.games g\s+WHERE \(\(g\.tenant_id = ([\w.()]+)\) AND \(g\.game_id = ([\w.()]+)\) AND \(g\.ended_at IS NULL\)\)\)';
BEGIN
  FOR p IN SELECT * FROM pg_policies WHERE pg_policies.schemaname = 'memory'
             AND (pg_policies.qual ~ 'SELECT|memory\.game_open\(' OR pg_policies.with_check ~ 'SELECT|memory\.game_open\(') LOOP
    qual := p.qual;
    checked := p.with_check;
    -- ( SELECT memory.scope_tenant() AS scope_tenant)  ->  memory.scope_tenant()
    qual := regexp_replace(qual, '\(\s*SELECT (memory\.scope_\w+\(\)) AS \w+\)', '\1', 'g');
    checked := regexp_replace(checked, '\(\s*SELECT (memory\.scope_\w+\(\)) AS \w+\)', '\1', 'g');
    -- EXISTS (SELECT 1 FROM memory.erased_subjects e WHERE e.tenant_id = T AND e.subject = memory.subject_hash(T, P))
    checked := regexp_replace(checked,
      'EXISTS \( SELECT 1\s+FROM memory\.erased_subjects e\s+WHERE \(\(e\.tenant_id = [\w.()]+\) AND \(e\.subject = memory\.subject_hash\(([\w.()]+), ([\w.()]+)\)\)\)\)',
      'memory.subject_erased(\1, \2)', 'g');
    -- EXISTS (SELECT 1 FROM memory.games g WHERE g.tenant_id = T AND g.game_id = G AND g.ended_at IS NULL)
    --   ->  game_id = memory.open_game(T, G)
    qual := regexp_replace(regexp_replace(qual, open_game, '(game_id = memory.open_game(\1, \2))', 'g'),
      'memory\.game_open\(((?:\w+\.)?\w+(?:\(\))?), ((?:\w+\.)?\w+(?:\(\))?)\)', '(game_id = memory.open_game(\1, \2))', 'g');
    checked := regexp_replace(regexp_replace(checked, open_game, '(game_id = memory.open_game(\1, \2))', 'g'),
      'memory\.game_open\(((?:\w+\.)?\w+(?:\(\))?), ((?:\w+\.)?\w+(?:\(\))?)\)', '(game_id = memory.open_game(\1, \2))', 'g');
    IF qual ~ 'SELECT' OR checked ~ 'SELECT' THEN
      RAISE EXCEPTION 'policy % on memory.% has a subquery the Citus profile cannot rewrite: % / %', p.policyname, p.tablename, qual, checked;
    END IF;
    -- "game_id = open_game(T, G)" means "game G is open" only where the row's game is G: G is the
    -- row's own game_id, or the policy also requires game_id = G.
    FOR rewritten IN SELECT m[1] FROM regexp_matches(coalesce(qual, '') || ' ' || coalesce(checked, ''), 'memory\.open_game\((?:\w+\.)?\w+(?:\(\))?, ((?:\w+\.)?\w+(?:\(\))?)\)', 'g') m LOOP
      IF rewritten NOT IN ('game_id', p.tablename || '.game_id')
         AND NOT (strpos(coalesce(qual, checked), '(game_id = ' || rewritten || ')') > 0
                  AND strpos(coalesce(checked, qual), '(game_id = ' || rewritten || ')') > 0) THEN
        RAISE EXCEPTION 'policy % on memory.% asks whether game % is open without binding its rows to that game', p.policyname, p.tablename, rewritten;
      END IF;
    END LOOP;
    EXECUTE format('DROP POLICY %I ON memory.%I', p.policyname, p.tablename);
    EXECUTE format('CREATE POLICY %I ON memory.%I AS %s FOR %s TO %s%s%s',
      p.policyname, p.tablename, p.permissive, p.cmd,
      (SELECT string_agg(quote_ident(r), ', ') FROM unnest(p.roles) r),
      CASE WHEN qual IS NULL THEN '' ELSE format(' USING (%s)', qual) END,
      CASE WHEN checked IS NULL THEN '' ELSE format(' WITH CHECK (%s)', checked) END);
  END LOOP;
END $$;
DROP FUNCTION IF EXISTS memory.game_open(uuid, text);

-- Unique keys include the distribution column.
DO $$
DECLARE
  i record;
BEGIN
  FOR i IN
    SELECT c.relname AS tablename, ic.relname AS indexname, con.conname,
           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.ord)
              FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum) AS columns
    FROM pg_index x
    JOIN pg_class c ON c.oid = x.indrelid
    JOIN pg_class ic ON ic.oid = x.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'memory'
    LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype IN ('u', 'p')
    WHERE x.indisunique
      AND c.relname NOT IN ('tenants', 'api_keys', 'jobs')
      AND NOT EXISTS (SELECT 1 FROM unnest(x.indkey) k(attnum)
                      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum AND a.attname = 'tenant_id')
  LOOP
    IF i.conname IS NOT NULL THEN
      EXECUTE format('ALTER TABLE memory.%I DROP CONSTRAINT %I', i.tablename, i.conname);
    ELSE
      EXECUTE format('DROP INDEX memory.%I', i.indexname);
    END IF;
    EXECUTE format('CREATE UNIQUE INDEX %I ON memory.%I (tenant_id, %s)', i.indexname, i.tablename, i.columns);
  END LOOP;
END $$;

-- The job queue's foreign key to memory.games (see above).
ALTER TABLE memory.jobs DROP CONSTRAINT IF EXISTS jobs_tenant_id_game_id_fkey;

-- Which tables Citus has already is read from pg_dist_partition, and shards on this node are left
-- alone: the citus_tables view measures every shard over new connections, which would wait on the
-- locks this migration holds (the queue's shard, altered above) on every start after the first.
-- Reference tables, then every table with a tenant_id, then the queue. Foreign keys of tables not
-- yet distributed are dropped first and added back at the end: Citus distributes a table only
-- when what it references is distributed already, and tables that reference a new reference table
-- would otherwise be turned into local tables that nothing can then distribute.
DO $$
DECLARE
  t record;
  f record;
  fks text[] := '{}';
  fk text;
BEGIN
  FOR f IN
    SELECT con.conrelid::regclass AS tbl, con.conname, pg_get_constraintdef(con.oid) AS def
    FROM pg_constraint con
    WHERE con.contype = 'f' AND con.connamespace = 'memory'::regnamespace
      AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = con.conrelid)
      AND NOT EXISTS (SELECT 1 FROM pg_dist_shard s WHERE to_regclass(shard_name(s.logicalrelid, s.shardid)) = con.conrelid)
  LOOP
    -- A fact's link to the fact it superseded (ON DELETE SET NULL (supersedes)): Citus refuses SET
    -- NULL on a key that includes the distribution column, so on Citus the link is not a foreign
    -- key, and a deleted predecessor leaves it naming a row that is gone.
    IF f.def !~ 'ON DELETE SET NULL' THEN
      fks := fks || format('ALTER TABLE %s ADD CONSTRAINT %I %s', f.tbl, f.conname, f.def);
    END IF;
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', f.tbl, f.conname);
  END LOOP;

  FOR t IN
    SELECT c.oid::regclass AS tbl, c.relname FROM pg_class c
    WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind = 'r'
      AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
      AND NOT EXISTS (SELECT 1 FROM pg_dist_shard s WHERE to_regclass(shard_name(s.logicalrelid, s.shardid)) = c.oid)
    ORDER BY c.relname
  LOOP
    IF t.relname IN ('tenants', 'api_keys') THEN
      PERFORM create_reference_table(t.tbl);
    ELSIF t.relname = 'jobs' THEN
      PERFORM citus_add_local_table_to_metadata(t.tbl);
    ELSIF EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.tbl AND a.attname = 'tenant_id' AND NOT a.attisdropped) THEN
      -- 'default' co-location: every uuid-distributed table with the same shard count shares shards.
      PERFORM create_distributed_table(t.tbl, 'tenant_id', colocate_with => 'default');
    ELSE
      RAISE EXCEPTION 'memory.% has no tenant_id: the Citus profile does not know where to put it', t.relname;
    END IF;
  END LOOP;

  FOREACH fk IN ARRAY fks LOOP
    EXECUTE fk;
  END LOOP;
END $$;
