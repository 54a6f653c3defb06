/** Resolves when `work` settles (either way), `ms` passed, or `signal` aborts, whichever comes first. */
export async function atMost(work: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      onAbort = () => resolve();
      if (signal?.aborted) resolve();
      else signal?.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
}
