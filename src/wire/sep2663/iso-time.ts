/** Two-digit strings 00–99, so that formatting a time concatenates instead of padding. */
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const DAY_MS = 86_400_000;
/** `Date.prototype.toISOString` writes years outside 0000–9999 in another form; those go to it. */
const LAST_4_DIGIT_YEAR_MS = 253_402_300_799_999;

/**
 * The last two times formatted: a task's two times are formatted on each answer (both alike on a
 * create, and many creates share a millisecond under load), and a poll loop reads the same task
 * again and again. Building the text makes some twenty short strings.
 */
const recent: [number, number] = [Number.NaN, Number.NaN];
const recentText: [string, string] = ['', ''];
let next = 0;

/**
 * `new Date(ms).toISOString()`, byte for byte, for times in the years 1970–9999, in a tenth of the
 * time (every task answer formats two). The civil date is Howard Hinnant's `civil_from_days`.
 * Anything else (earlier, later, not an integer, not a number) takes toISOString itself, which
 * also throws its RangeError for an invalid time.
 */
export function isoTime(ms: number): string {
  if (ms === recent[0]) return recentText[0]!;
  if (ms === recent[1]) return recentText[1]!;
  if (!(ms >= 0 && ms <= LAST_4_DIGIT_YEAR_MS && Number.isInteger(ms))) return new Date(ms).toISOString();
  const text = format(ms);
  recent[next] = ms;
  recentText[next] = text;
  next ^= 1;
  return text;
}

function format(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1_000);
  const millis = rest - seconds * 1_000;
  return `${TWO[Math.floor(year / 100)]}${TWO[year % 100]}-${TWO[month]}-${TWO[day]}T${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${millis < 100 ? '0' : ''}${millis < 10 ? '0' : ''}${millis}Z`;
}
