/**
 * Identifiers inside the two healthcare message formats builders paste most: HL7 v2 segments
 * (`PID|1||123456^^^MRN||DOE^JANE^Q||19800101|F|||1 MAIN ST^^SPRINGFIELD^IL^62704||5551234567`)
 * and X12 segments (`NM1*IL*1*DOE*JANE****MI*W998812345~`, `DMG*D8*19800101`). Their fields are
 * positional, so the format itself says what each value is; no label is needed.
 */
import type { IdentifierKind } from "../redact.ts";

export interface SegmentSpan {
  kind: IdentifierKind;
  start: number;
  end: number;
}

/**
 * HL7 v2: for each segment, which fields (1-based after the segment name) hold what. Components
 * (`^`) of a field are redacted one by one, so the separators stay and the message still parses.
 */
const HL7_FIELDS: Readonly<Record<string, Readonly<Record<number, IdentifierKind>>>> = {
  PID: {
    2: "mrn",
    3: "mrn",
    4: "mrn",
    5: "name",
    6: "name",
    7: "dob",
    9: "name",
    11: "address",
    13: "phone",
    14: "phone",
    18: "account",
    19: "ssn",
    20: "license",
  },
  NK1: { 2: "name", 4: "address", 5: "phone", 6: "phone" },
  GT1: { 3: "name", 5: "address", 6: "phone", 7: "phone", 8: "dob", 12: "ssn" },
  IN1: { 16: "name", 18: "dob", 19: "address", 36: "member_id", 49: "member_id" },
  MRG: { 1: "mrn", 7: "name" },
};

/** X12: the element positions (1-based) that identify a person, by segment and qualifier. */
function x12Fields(elements: readonly string[]): Readonly<Record<number, IdentifierKind>> {
  switch (elements[0]) {
    case "NM1":
      // Entity type 1 is a person: last, first, middle names; the id (element 9) unless it is a
      // provider's NPI (qualifier XX) or a tax id (FI).
      if (elements[2] !== "1") return {};
      return elements[8] === "XX" || elements[8] === "FI"
        ? { 3: "name", 4: "name", 5: "name" }
        : { 3: "name", 4: "name", 5: "name", 9: "member_id" };
    case "DMG":
      return { 2: "dob" };
    case "N3":
      return { 1: "address", 2: "address" };
    case "N4":
      return { 1: "address", 3: "zip" };
    case "REF":
      return elements[1] === "SY" || elements[1] === "0F" || elements[1] === "1W" || elements[1] === "6P"
        ? { 2: elements[1] === "SY" ? "ssn" : "member_id" }
        : {};
    case "PER":
      return { 2: "name", 4: "phone", 6: "phone", 8: "phone" };
    default:
      return {};
  }
}

const HL7_SEGMENT = /(?:^|[\r\n\s'"`])((?:PID|NK1|GT1|IN1|MRG)\|[^\r\n'"`]{1,2000})/g;
const X12_SEGMENT = /(?:^|[~\r\n\s'"`])((?:NM1|DMG|N3|N4|REF|PER)\*[^~\r\n'"`]{1,400})/g;

function push(spans: SegmentSpan[], kind: IdentifierKind, start: number, value: string): void {
  // Leading and trailing spaces of a field are not part of the value.
  const trimmed = value.trim();
  if (trimmed.length === 0) return;
  const offset = value.indexOf(trimmed);
  spans.push({ kind, start: start + offset, end: start + offset + trimmed.length });
}

function hl7(text: string, spans: SegmentSpan[]): void {
  HL7_SEGMENT.lastIndex = 0;
  for (let match = HL7_SEGMENT.exec(text); match !== null; match = HL7_SEGMENT.exec(text)) {
    const segment = match[1] ?? "";
    const base = match.index + match[0].length - segment.length;
    const fields = segment.split("|");
    const kinds = HL7_FIELDS[fields[0] ?? ""] ?? {};
    let at = base + (fields[0]?.length ?? 0) + 1;
    for (let i = 1; i < fields.length; i++) {
      const field = fields[i] ?? "";
      const kind = kinds[i];
      if (kind !== undefined) {
        let componentAt = at;
        for (const component of field.split(/[\^~&]/)) {
          // Identifier type codes and assigning authorities ("MRN", "SS", "HOSP") are kept.
          const typeCode = kind !== "name" && /^[A-Z]{1,5}$/.test(component);
          if (!typeCode) push(spans, kind, componentAt, component);
          componentAt += component.length + 1;
        }
      }
      at += field.length + 1;
    }
  }
}

function x12(text: string, spans: SegmentSpan[]): void {
  X12_SEGMENT.lastIndex = 0;
  for (let match = X12_SEGMENT.exec(text); match !== null; match = X12_SEGMENT.exec(text)) {
    const segment = match[1] ?? "";
    const base = match.index + match[0].length - segment.length;
    const elements = segment.split("*");
    const kinds = x12Fields(elements);
    let at = base + (elements[0]?.length ?? 0) + 1;
    for (let i = 1; i < elements.length; i++) {
      const element = elements[i] ?? "";
      const kind = kinds[i];
      if (kind !== undefined) push(spans, kind, at, element);
      at += element.length + 1;
    }
  }
}

/** Identifiers in the HL7 v2 and X12 segments of `text`. */
export function findSegmentIdentifiers(text: string): SegmentSpan[] {
  const spans: SegmentSpan[] = [];
  if (text.includes("|")) hl7(text, spans);
  if (text.includes("*")) x12(text, spans);
  return spans;
}
