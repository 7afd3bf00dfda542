import type { CloneManifest } from './cloner.js';

/** A clone manifest for a person to read (the CLI without --json). */
export function formatManifest(m: CloneManifest): string {
  const lines = [
    `${m.mode === 'dry_run' ? 'DRY RUN (nothing written)' : 'COMMITTED'}: clone ${m.source} -> ${m.target}`,
    `  operation ${m.operationId}  by ${m.actor}  at ${m.at}  (${m.toolVersion})`,
    `  estimated tokens: ${m.tokens.estimated} (procedural ${m.tokens.byTier.procedural}, lore ${m.tokens.byTier.lore}, social ${m.tokens.byTier.social}; ${m.tokens.tokenizer})`,
    `  cleared: ${m.cleared.total} (procedural ${m.cleared.procedural}, lore ${m.cleared.lore}, social ${m.cleared.social})`,
    `  blocked: ${m.blocked.total}`,
    ...Object.entries(m.blocked.byRule).map(([rule, n]) => `    ${rule.padEnd(24)} ${n}`),
    `  consent tokens checked: ${m.consent.tokensChecked}; participants consented: ${m.consent.participantsConsented}` +
      (Object.keys(m.consent.byStatus).length ? ` (${Object.entries(m.consent.byStatus).map(([s, n]) => `${s} ${n}`).join(', ')})` : ''),
  ];
  if (m.sample.length) {
    lines.push('  sample of blocked rows:');
    for (const s of m.sample) lines.push(`    ${s.rule.padEnd(24)} ${s.tier.padEnd(10)} ${s.id}  ${s.preview}`);
  }
  if (m.written) {
    const p = m.written.procedural;
    lines.push(`  written: procedural ${p ? `${p.npcId} v${p.version}` : 'none'}, lore ${m.written.lore}, social ${m.written.social}`);
  }
  return lines.join('\n');
}
