/**
 * @module The format registry: which formats are asserted per dialect.
 * (Initial version: none; each format gets its own file in this folder.)
 */

export type FormatCheck = (value: string) => boolean;

/** The checker for `name` under `dialect` (a meta-schema URI), or undefined when not asserted (unknown formats pass). */
export function getFormat(_name: string, _dialect: string): FormatCheck | undefined {
  return undefined;
}
