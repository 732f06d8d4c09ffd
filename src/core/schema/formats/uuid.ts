/** @module `uuid` format: RFC 4122 textual form (any version/variant nibble, case-insensitive hex). */

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
