// CSV as RFC 4180 writes it (and spreadsheets export it): fields separated by commas, records
// by CRLF or LF, a field in double quotes may hold commas, line breaks and doubled quotes.
// Records are read from a position in the text, so an import resumes where its last
// committed chunk ended without reading the file again from the top. Lines with nothing on
// them are skipped (exports often end with one); they are not rows.

export interface CsvRecord {
  cells: string[];
  /** Where the next record begins. */
  end: number;
}

export class CsvError extends Error {}

/** `,` `\n` `\r` `"` */
const STOPS = new Set([44, 10, 13, 34]);

/** The record beginning at `start` (blank lines before it skipped), or undefined at the end of the text. */
export function readRecord(text: string, start: number): CsvRecord | undefined {
  let at = start;
  while (text[at] === '\n' || (text[at] === '\r' && text[at + 1] === '\n')) at += text[at] === '\n' ? 1 : 2;
  if (at >= text.length) return undefined;
  const cells: string[] = [];
  let cell = '';
  for (;;) {
    if (text[at] === '"' && cell === '') {
      // A quoted field: up to the quote that is not doubled.
      let close = at + 1;
      for (;;) {
        const quote = text.indexOf('"', close);
        if (quote < 0) throw new CsvError(`a quoted field opened at character ${at + 1} is never closed`);
        if (text[quote + 1] === '"') {
          cell += text.slice(close, quote + 1);
          close = quote + 2;
          continue;
        }
        cell += text.slice(close, quote);
        at = quote + 1;
        break;
      }
      const next = text[at];
      if (next !== undefined && next !== ',' && next !== '\n' && !(next === '\r' && text[at + 1] === '\n')) {
        throw new CsvError(`a quoted field closed at character ${at} is followed by text before the next comma`);
      }
    }
    const next = text[at];
    if (next === ',') {
      cells.push(cell);
      cell = '';
      at++;
    } else if (next === undefined || next === '\n' || (next === '\r' && text[at + 1] === '\n')) {
      cells.push(cell);
      return { cells, end: next === undefined ? at : at + (next === '\n' ? 1 : 2) };
    } else {
      // Up to the next comma, line break or quote (a quote inside an unquoted field, or a
      // lone CR, is kept as it is).
      let stop = at + 1;
      while (stop < text.length && !STOPS.has(text.charCodeAt(stop))) stop++;
      cell += text.slice(at, stop);
      at = stop;
    }
  }
}

/** The text without a UTF-8 byte order mark (spreadsheets write one). */
export const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
