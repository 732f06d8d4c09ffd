/**
 * @module `time` format: RFC 3339 full-time (partial-time + time-offset, offset required).
 * A leap second (:60) is only accepted when the instant is 23:59:60 in UTC.
 */

const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([zZ])|([+-])(\d{2}):(\d{2}))$/;

export function isTime(value: string): boolean {
  const m = TIME.exec(value);
  if (!m) return false;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  const second = Number(m[3]);
  if (hour > 23 || minute > 59 || second > 60) return false;
  let offset = 0;
  if (!m[4]) {
    const oh = Number(m[6]);
    const om = Number(m[7]);
    if (oh > 23 || om > 59) return false;
    offset = (m[5] === '+' ? 1 : -1) * (oh * 60 + om);
  }
  if (second === 60) {
    const utcMinutes = (((hour * 60 + minute - offset) % 1440) + 1440) % 1440;
    return utcMinutes === 23 * 60 + 59;
  }
  return true;
}
