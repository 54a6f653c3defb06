// The errors an async transcription job ends with on its record (error_type + message), as opposed to bugs, which
// are retried and then recorded as internal errors.
import { ApiError } from '../../wire/api-error.js';

/** An error meant for the job's record. */
export class JobFailure extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** `work`, with the ApiErrors that `recorded` picks turned into the job's failure (the client reads them on the record). */
export async function recordingApiErrors<T>(work: Promise<T>, recorded: (err: ApiError) => boolean): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof ApiError && recorded(err)) throw new JobFailure(err.type, err.message);
    throw err;
  }
}
