/** A one-line progress bar on stderr (only when stderr is a terminal, or when forced). */
export function progressBar(label: string, options: { force?: boolean } = {}): (done: number, total: number, detail?: string) => void {
  const live = options.force ?? process.stderr.isTTY;
  let last = -1;
  return (done, total, detail = '') => {
    const width = 28;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    if (!live) {
      const pct = total === 0 ? 100 : Math.floor((done / total) * 10) * 10;
      if (pct !== last) process.stderr.write(`${label}: ${pct}%\n`);
      last = pct;
      return;
    }
    process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${detail.slice(0, 40).padEnd(40)}`);
    if (done >= total) process.stderr.write('\n');
  };
}
