import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ask, createGame, go, newPlayer, screenshot, signUp, type WebWorld } from './support/web.js';

/**
 * The operator's QA inspector in the browser: the memory ids behind an NPC reply (checked against
 * the memory service's own explanation) with the remembered text beside each (and its read in the
 * audit ledger), the audit ledger verified and then failing after a
 * tamper by the database owner, a clone dry-run manifest, and the lineage of a committed clone.
 */
export function inspector(ctx: { world: WebWorld }): void {
  describe('the QA inspector', () => {
    let world: WebWorld;
    let operator: Page;
    beforeAll(() => {
      world = ctx.world;
    });

    const memory = async <T>(method: string, path: string, body?: unknown, token = world.system.tenant.adminKey): Promise<T> => {
      const response = await fetch(new URL(path, world.system.urls.memory), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };

    it('refuses a missing key and a runtime key: only an admin key with "audit" signs in', async () => {
      const session = (authorization?: string) =>
        fetch(new URL('/inspector/api/session', world.url), { method: 'POST', headers: authorization ? { authorization } : {} });
      expect((await session()).status).toBe(401);
      const runtime = await session(`Bearer ${world.system.tenant.runtimeKey}`);
      expect(runtime.status).toBe(403);
      expect(((await runtime.json()) as { error: { code: string } }).error.code).toBe('ADMIN_KEY_REQUIRED');
      expect((await session(`Bearer ${world.system.tenant.adminKey}`)).status).toBe(200);
    });

    it('shows the memory ids behind an NPC reply with the remembered text beside each (an audited read), and no other player text', async () => {
      const ivy = await newPlayer(world);
      await signUp(ivy.page, 'ivy-inspected', 'a long enough passphrase');
      const gameId = await createGame(ivy.page);
      await go(ivy.page, 'north', /Reading Room/);
      await ask(ivy.page, '@Mara my name is Ivy and I work as a cartographer.', 'npc-mara-quenby');
      await world.system.engine.idle();
      await world.system.memory.jobs.drain();
      const reply = await ask(ivy.page, '@Mara Hello again!', 'npc-mara-quenby');
      expect(reply).toMatch(/Ivy/);
      await ivy.context.close();

      // The truth, from the memory service itself.
      const turn = world.system.runtime.turnsOf(gameId).at(-1)!;
      const { token } = await memory<{ token: string }>('POST', '/v1/tokens', { gameId, ttlSeconds: 60 });
      const explained = await memory<{ chosen: Record<string, { id: string }[]> }>('GET', `/v1/contexts/${turn.contextId}`, undefined, token);
      const expected = Object.values(explained.chosen).flat().map((m) => m.id).sort();
      expect(expected.length).toBeGreaterThan(0);

      ({ page: operator } = await newPlayer(world));
      await operator.goto('/inspector/');
      await screenshot(operator, '07-inspector-sign-in');
      await operator.getByLabel('Admin API key of the memory service').fill(world.system.tenant.adminKey);
      await operator.getByLabel(/Engine operator token/).fill(world.system.operatorToken);
      await operator.getByRole('button', { name: 'Sign in', exact: true }).click();
      await operator.locator('#screen-inspector').waitFor();
      await operator.getByRole('textbox', { name: 'Game id' }).fill(gameId);
      await operator.getByRole('button', { name: 'List NPC turns' }).click();
      await operator.locator(`#turns button[data-context="${turn.contextId}"]`).click();
      await operator.locator('#explain .memory-id').first().waitFor();
      const shown = (await operator.locator('#explain .memory-id').allTextContents()).sort();
      expect(shown).toEqual(expected);
      // Beside each id, what the NPC remembered: opened by the memory service for the operator's
      // admin principal. The row of the fact it learned from Ivy reads "cartographer".
      const remembered = await operator.locator('#explain .memory-text').evaluateAll((cells) =>
        cells.map((c) => ({ id: (c as HTMLElement).dataset.memoryId, text: c.textContent ?? '', unavailable: c.classList.contains('unavailable') })),
      );
      expect(remembered.map((r) => r.id).sort()).toEqual(expected);
      expect(remembered.filter((r) => r.unavailable)).toEqual([]);
      for (const r of remembered) expect(r.text.trim().length).toBeGreaterThan(0);
      expect(remembered.some((r) => /cartographer/i.test(r.text))).toBe(true);
      const row = operator.locator('#explain tr', { has: operator.locator('.memory-text', { hasText: /cartographer/i }) }).first();
      expect(expected).toContain(await row.locator('.memory-id').innerText());
      // Nowhere else: the page outside the remembered-text cells still shows no player text.
      const elsewhere = await operator.locator('#screen-inspector').evaluate((root) => {
        const copy = root.cloneNode(true) as HTMLElement;
        for (const cell of copy.querySelectorAll('.memory-text')) cell.remove();
        return copy.innerText ?? copy.textContent ?? '';
      });
      expect(elsewhere).toContain(turn.contextId);
      expect(elsewhere).not.toMatch(/Ivy|cartographer/);
      // The read is in the memory service's audit ledger: the operator, the context, the ids.
      const { records } = await memory<{ records: { action: string; actor: string; subject: string; details: { read: string[] } }[] }>('GET', '/v1/audit/records?limit=1000');
      const read = records.filter((r) => r.action === 'memory_read' && r.subject === turn.contextId);
      expect(read.length).toBeGreaterThanOrEqual(1);
      expect(read.at(-1)!.actor).toBe(`key:${world.system.tenant.adminKey.split('_')[1]}`);
      expect([...read.at(-1)!.details.read].sort()).toEqual(expected);
      expect(JSON.stringify(read)).not.toMatch(/cartographer/i);
      expect(await operator.locator('#memory-read-audit').innerText()).toMatch(/recorded in the audit ledger \(seq \d+\)/);
      await screenshot(operator, '08-inspector-npc-reply');
    });

    it('shows a clone dry-run manifest and the lineage of a cloned row', async () => {
      await operator.getByRole('tab', { name: 'Clone dry run' }).click();
      await operator.getByLabel('From NPC').fill('npc-mara-quenby');
      await operator.getByLabel('To NPC').fill('npc-marta-quenby');
      await operator.getByRole('button', { name: 'Dry run' }).click();
      await operator.locator('#manifest dd', { hasText: 'dry_run' }).waitFor();
      await screenshot(operator, '09-inspector-clone-dry-run');

      const { manifest: committed } = await memory<{ manifest: { operationId: string } }>('POST', '/v1/clones', { from: 'npc-mara-quenby', to: 'npc-marta-quenby' });
      await operator.getByRole('tab', { name: 'Lineage' }).click();
      await operator.getByLabel('Clone operation id or source row id').fill(committed.operationId);
      await operator.getByRole('button', { name: 'Trace' }).click();
      await operator.locator('#lineage tbody tr').first().waitFor();
      expect(await operator.locator('#lineage').innerText()).toContain('npc-marta-quenby');
      await screenshot(operator, '10-inspector-lineage');
    });

    it('shows the ledger verified, then failed after the owner rewrites a record', async () => {
      await operator.getByRole('tab', { name: 'Audit ledger' }).click();
      await operator.locator('#verify-status[data-ok="true"]').waitFor();
      expect(await operator.locator('#ledger tbody tr').count()).toBeGreaterThanOrEqual(2);
      await screenshot(operator, '11-inspector-ledger-verified');

      // What someone with the database's superuser could do: rewrite a record, trigger off.
      await world.system.memory.db.transaction(async (tx) => {
        await tx.query('ALTER TABLE memory.audit_ledger DISABLE TRIGGER audit_ledger_no_rewrite');
        await tx.query(`UPDATE memory.audit_ledger SET subject = 'npc-someone-else' WHERE tenant_id = $1 AND seq = 2`, [world.system.tenant.tenantId]);
        await tx.query('ALTER TABLE memory.audit_ledger ENABLE TRIGGER audit_ledger_no_rewrite');
      });
      await operator.getByRole('button', { name: 'Verify every link' }).click();
      const status = operator.locator('#verify-status[data-ok="false"]');
      await status.waitFor();
      expect(await status.innerText()).toMatch(/FAILED.*HASH_MISMATCH at seq 2/);
      await operator.getByRole('tab', { name: 'NPC reply' }).click();
      await operator.getByRole('tab', { name: 'Audit ledger' }).click();
      await operator.locator('#ledger tr.bad[data-seq="2"]').waitFor();
      await screenshot(operator, '12-inspector-ledger-failed');
    });
  });
}
