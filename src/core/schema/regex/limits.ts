/**
 * @module The error for a valid pattern that cannot be matched within the work
 * limits (the schema engine reports it as `too_complex`).
 */

/** A valid pattern refused because it cannot be matched within the work limits. */
export class PatternLimitError extends Error {
  constructor(
    message: string,
    readonly limit: 'maxPatternSize' | 'maxPropertyTables' | 'backreferencePaths',
    readonly max: number,
  ) {
    super(message);
    this.name = 'PatternLimitError';
  }
}
