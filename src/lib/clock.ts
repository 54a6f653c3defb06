/** Injectable time source, so month boundaries and expiries can be tested without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function isoNow(clock: Clock = systemClock): string {
  return clock.now().toISOString();
}
