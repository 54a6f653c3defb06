/** Injectable time source, so month boundaries and expiries can be tested without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The UTC calendar month of a date, as YYYY-MM (usage months and monthly budgets). */
export const utcMonth = (d: Date): string => d.toISOString().slice(0, 7);

export function isoNow(clock: Clock = systemClock): string {
  return clock.now().toISOString();
}
