/**
 * Whether `work` settles successfully within `timeoutMs`: true if it resolves in time, false if
 * it rejects or is still running then (it is not cancelled). The timer never outlives the call.
 */
export async function within(work: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
  try {
    return await Promise.race([work.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
