/**
 * Identifiers inside the structured text builders paste most: HL7 v2 segments
 * (`PID|1||123456^^^MRN||DOE^JANE^Q||19800101|F|||1 MAIN ST^^SPRINGFIELD^IL^62704||5551234567`)
 * and X12 segments (`NM1*IL*1*DOE*JANE****MI*W998812345~`, `DMG*D8*19800101`), CSV rows under a
 * header that names their columns (`last,first,dob` then `Reyes,Carmen,1980-01-01`), pipe tables
 * the same way (`| Pt # | Bed |` then `| 340012 | 4B |`), and FHIR references (`Patient/88231`).
 * The format says what each value is; no label is needed.
 */
import type { IdentifierKind } from "../redact.ts";
import { fold } from "./fold.ts";
import { vocab } from "./vocab.ts";

export interface SegmentSpan {
  /** "keep" for a cell of a column that holds codes or amounts, which no other detector may take. */
  kind: IdentifierKind | "keep";
  start: number;
  end: number;
}

/**
 * HL7 v2: for each segment, which fields (1-based after the segment name) hold what. Components
 * (`^`) of a field are redacted one by one, so the separators stay and the message still parses.
 */
const HL7_FIELDS: Readonly<Record<string, Readonly<Record<number, SegmentSpan["kind"]>>>> = {
  // The message's header (applications, facilities, its time, type, control id, version) and its
  // event's time name no one: kept. MSH-1 is the field separator, so the split's field i is MSH-(i+1).
  MSH: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [i + 1, "keep"] as const)),
  EVN: { 1: "keep", 2: "keep", 6: "keep" },
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
  IN1: { 8: "member_id", 16: "name", 18: "dob", 19: "address", 36: "member_id", 49: "member_id" },
  MRG: { 1: "mrn", 7: "name" },
  // The attending, referring, consulting and admitting doctors; the visit number; the admission's
  // and discharge's times.
  PV1: { 7: "name", 8: "name", 9: "name", 17: "name", 19: "account", 44: "date", 45: "date" },
  // Orders, results and charges for the patient: when (ORC-9, OBR-7, OBR-22, OBX-14, FT1-4, DG1-5,
  // PR1-5, AL1-6) and who ordered (ORC-12, OBR-16). A message's own time (MSH-7, EVN-2) is no one's.
  ORC: { 9: "date", 12: "name" },
  OBR: { 7: "date", 16: "name", 22: "date" },
  // A result's type, code, units, reference range and flags are kept ("70-99" is no licence); its
  // value (OBX-5) is read as any text is: it may be an age, or a note naming someone.
  OBX: { 2: "keep", 3: "keep", 4: "keep", 6: "keep", 7: "keep", 8: "keep", 11: "keep", 14: "date" },
  FT1: { 4: "date", 7: "keep", 10: "keep" },
  DG1: { 5: "date" },
  PR1: { 5: "date" },
  AL1: { 6: "date" },
};

const REF_QUALIFIERS: Readonly<Record<string, IdentifierKind>> = {
  SY: "ssn",
  "0F": "member_id",
  "1W": "member_id",
  "6P": "member_id",
  "1L": "member_id",
  IG: "member_id",
  EA: "mrn",
  EJ: "account",
  "1K": "account",
  D9: "account",
  F8: "account",
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
    case "REF": {
      // By qualifier: SSN (SY); member, subscriber, group or policy numbers (0F, 1W, 6P, 1L, IG);
      // medical record number (EA); patient account, payer claim and claim numbers (EJ, 1K, D9, F8).
      const kind = REF_QUALIFIERS[elements[1] ?? ""];
      return kind === undefined ? {} : { 2: kind };
    }
    case "CLM":
      // CLM01: the patient's account number with the provider.
      return { 1: "account" };
    case "CLP":
      // An 835's claim: CLP01, the patient's control number; CLP07, the payer's number for the claim.
      return { 1: "account", 7: "account" };
    case "PER":
      return { 2: "name", 4: "phone", 6: "phone", 8: "phone" };
    case "DTP":
      // A date of the claim's or the member's: service, admission, discharge, coverage (a date,
      // D8, or a range, RD8).
      return elements[2] === "D8" || elements[2] === "RD8" ? { 3: "date" } : {};
    case "STC":
      // A claim status's effective date.
      return /^\d{8}$/.test(elements[2] ?? "") ? { 2: "date" } : {};
    default:
      return {};
  }
}

const HL7_SEGMENT =
  /(?:^|[\r\n\s'"`])((?:MSH|EVN|PID|NK1|GT1|IN1|MRG|PV1|ORC|OBR|OBX|FT1|DG1|PR1|AL1)\|[^\r\n'"`]{1,2000})/g;
const X12_SEGMENT = /(?:^|[~\r\n\s'"`])((?:NM1|DMG|N3|N4|REF|PER|CLM|CLP|DTP|STC)\*[^~\r\n'"`]{1,400})/g;

function push(spans: SegmentSpan[], kind: SegmentSpan["kind"], start: number, value: string): void {
  // Leading and trailing spaces of a field are not part of the value; a placeholder an earlier
  // pass left ("MRG| [EMAIL]") is redacted already, as what it was.
  const trimmed = value.trim();
  if (trimmed.length === 0 || /^\[[A-Z_]+\]$/.test(trimmed)) return;
  // A template's slot ("{LAST}", "<FIRST>", "${dob}") holds no one's value yet.
  if (/^(?:\{\{?[\w .]+\}\}?|<[\w .]+>|\$\{?[\w.]+\}?)$/.test(trimmed)) return;
  const offset = value.indexOf(trimmed);
  spans.push({ kind, start: start + offset, end: start + offset + trimmed.length });
}

/** Each segment `pattern` finds, split at `separator`, with the offset of every field in `text`. */
function* segmentsOf(
  text: string,
  pattern: RegExp,
  separator: string,
): Generator<{ fields: string[]; offsets: number[] }> {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const segment = match[1] ?? "";
    const fields = segment.split(separator);
    const offsets: number[] = [];
    let at = match.index + match[0].length - segment.length;
    for (const field of fields) {
      offsets.push(at);
      at += field.length + 1;
    }
    yield { fields, offsets };
  }
}

/**
 * The insured's name and birth date one field early, as hand-written IN1 segments often have them
 * (a bar short before IN1-16): a name of components, a date of eight digits.
 */
function shiftedInsured(field: string, i: number): IdentifierKind | undefined {
  if (i >= 15 && i <= 17 && /^(?:19|20)\d{6}$/.test(field)) return "dob";
  if (i === 15 && /^[\p{L}'’ -]+\^[\p{L}'’ ^-]+$/u.test(field)) return "name";
  return undefined;
}

/** HL7 relationship codes, where a shifted segment puts one in a name's field: no one's name. */
const RELATIONSHIP_CODES = new Set(["SEL", "SELF", "SPO", "CHD", "DEP", "EMP", "OTH", "PAR", "MTH", "FTH", "GRD"]);

/** The prefix and suffix components of an HL7 name (XPN.4, XPN.5). */
const NAME_AFFIXES = new Set(["MR", "MRS", "MS", "MISS", "DR", "JR", "SR", "II", "III", "IV"]);

function hl7(text: string, spans: SegmentSpan[]): void {
  for (const { fields, offsets } of segmentsOf(text, HL7_SEGMENT, "|")) {
    const kinds = HL7_FIELDS[fields[0] ?? ""] ?? {};
    fields.forEach((field, i) => {
      const kind = kinds[i] ?? (fields[0] === "IN1" ? shiftedInsured(field, i) : undefined);
      if (i === 0 || kind === undefined) return;
      let componentAt = offsets[i] ?? 0;
      for (const component of field.split(/[\^~&]/)) {
        // Identifier type codes and assigning authorities ("MRN", "SS", "MERCYHOSP"), a name's
        // prefix or suffix ("MRS", "JR"), and a doctor's number before the name ("0045^STRAND^MARGIT") are kept.
        const typeCode =
          kind === "name"
            ? RELATIONSHIP_CODES.has(component) ||
              NAME_AFFIXES.has(component.toUpperCase().replace(/\.$/, "")) ||
              !/\p{L}/u.test(component)
            : /^[A-Z][A-Z_]{0,19}$/.test(component);
        if (!typeCode) push(spans, kind, componentAt, component);
        componentAt += component.length + 1;
      }
    });
  }
}

function x12(text: string, spans: SegmentSpan[]): void {
  for (const { fields, offsets } of segmentsOf(text, X12_SEGMENT, "*")) {
    const kinds = x12Fields(fields);
    fields.forEach((field, i) => {
      const kind = kinds[i];
      if (i > 0 && kind !== undefined) push(spans, kind, offsets[i] ?? 0, field);
    });
  }
}

/**
 * A column of codes or amounts, by its header's last word, when no identifier's name matched: a
 * billing code, a diagnosis code, a lab code, a count, a price ("cpt", "icd10", "dx_code",
 * "units", "balance"). Its cells are kept: a cue elsewhere in the text ("zip" in another column's
 * header) makes none of them a ZIP code.
 */
const CODE_COLUMN =
  /(?:^|[\s_-])(?:cpt|hcpcs|icd(?:9|10)?|dx|loinc|ndc|snomed|drg|rev(?:enue)?code|pos|code|codes|modifier|units|qty|quantity|amount|amt|balance|bal|price|cost|charge|charges|paid|copay|count|total|los|score|dose|mg)$/i;

/** What a CSV column holds, by its header (lower case, `_` and spaces removed), in the languages of the forms builders paste. */
function columnKind(header: string): SegmentSpan["kind"] | null {
  const kind = identifierColumnKind(header);
  return kind === null && CODE_COLUMN.test(header.trim().replace(/["']/g, "")) ? "keep" : kind;
}

function identifierColumnKind(header: string): IdentifierKind | null {
  const key = header.toLowerCase().replace(/[\s_\-"']/g, "");
  if (
    /^(?:first|last|given|family|middle|sur)?name$|^(?:first|last|given|family|surname|forename|fname|lname|patient|patientname|fullname|displayname|guarantor|caregiver|subscriber|contact|nachname|vorname|nombre|apellidos?|nome|sobrenome|prenom)$/.test(
      key,
    )
  )
    return "name";
  if (
    /^(?:dob|birthdate|dateofbirth|birthday|birth|born|geburtsdatum|fechadenacimiento|fechanacimiento|datadenascimento|datanascimento)$/.test(
      key,
    )
  )
    return "dob";
  if (/^(?:ssn|social|socialsecurity(?:number)?)$/.test(key)) return "ssn";
  if (
    /^(?:mrn|chart|chartnumber|patientid|patientno|patientnumber|medicalrecordnumber|recordnumber|hospitalnumber|pt|ptid|patnr|patid|patientennummer|patientennr|fallnr|fallnummer)#?$|^(?:mrn|chart|pt|patient)(?:#|no|nr)$/.test(
      key,
    )
  )
    return "mrn";
  if (/^(?:phone|phonenumber|mobile|cell|tel|telephone|homephone|workphone|telefon|telefono)$/.test(key))
    return "phone";
  if (/^(?:email|emailaddress|mail)$/.test(key)) return "email";
  if (/^(?:address|address1|address2|addressline1|addressline2|street|streetaddress|addr|city|town)$/.test(key))
    return "address";
  if (/^(?:zip|zipcode|postalcode|postcode|plz|postleitzahl|cep|codigopostal)$/.test(key)) return "zip";
  if (
    /^(?:memberid|memberno|membernumber|subscriberid|subscriberno|subscribernumber|policynumber|policyid|medicaidid|medicareid|mbi|groupnumber|group|groupid|groupno|grp)$/.test(
      key,
    )
  )
    return "member_id";
  if (
    /^(?:account|accountnumber|acct|accountno|claimid|claimno|claimnumber|invoice|invoiceno|invoicenumber)$/.test(key)
  )
    return "account";
  if (/^(?:plate|licenseplate|plateno|platenumber|vin)$/.test(key)) return "vehicle";
  if (/^(?:serial|serialno|serialnumber|sn|devicesn|deviceserial|deviceid|imei|udi)$/.test(key)) return "device_id";
  if (/^(?:admitdate|dischargedate|visitdate|dos|servicedate|appointmentdate|apptdate)$/.test(key)) return "date";
  if (/^(?:age|ageyears|ageyrs)$/.test(key)) return "age";
  return compoundColumnKind(header);
}

/** Who a column of names can belong to: "patient_name", "emergency_contact_name", "PCP name" (not "drug_name", "clinic_name"). */
const PERSON_MODIFIERS = new Set(
  "patient pt pat contact emergency guarantor caregiver provider doctor physician nurse member subscriber parent mother father spouse guardian insured responsible kin nok pcp referring attending ordering rendering full first last given family middle preferred legal maiden sur".split(
    " ",
  ),
);
/** The words that make a column an id or a number: "patient_id", "PatNum", "claim_no". */
const ID_WORDS = new Set(["id", "no", "nr", "num", "nbr", "number", "key"]);
/** The events whose date is a person's: "admit_date", "visitDt", "date_of_service". */
const PERSON_EVENTS = new Set(
  "admit admission discharge visit service appointment appt death surgery procedure encounter".split(" "),
);

/**
 * A compound column name read by its words (snake case, kebab case, camel case or spaces) when no
 * exact name matched: its last word says what it holds, the words before it whose ("patient_mrn",
 * "contact_phone", "home_zip", "guarantor_ssn", "PatNum"). A name column counts only when a word
 * before "name" is a person's; a hash or a token of an identifier ("mrn_hash") is none.
 */
function compoundColumnKind(header: string): IdentifierKind | null {
  const words = header
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  const head = words[words.length - 1];
  if (words.length < 2 || head === undefined) return null;
  const before = words.slice(0, -1);
  const has = (word: string) => before.includes(word);
  if (head === "mrn") return "mrn";
  if (head === "ssn") return "ssn";
  if (head === "dob" || (has("birth") && (head === "date" || head === "dt"))) return "dob";
  if (head === "email") return "email";
  if (head === "fax") return "fax";
  if (head === "phone" || head === "mobile" || head === "cell" || head === "tel") return "phone";
  if (head === "zip" || head === "zipcode" || head === "postcode" || (has("postal") && head === "code")) return "zip";
  if (head === "address" || head === "street" || head === "addr") {
    if (has("ip")) return "ip";
    if (has("email")) return "email";
    if (has("mac")) return "device_id";
    return has("web") || has("server") || has("host") || has("remote") ? null : "address";
  }
  if (head === "name") return before.some((word) => PERSON_MODIFIERS.has(word)) ? "name" : null;
  if (ID_WORDS.has(head)) {
    if (
      before.some((word) => word === "mrn" || word === "patient" || word === "pt" || word === "pat" || word === "chart")
    )
      return "mrn";
    if (before.some((word) => word === "member" || word === "subscriber" || word === "policy" || word === "medicaid"))
      return "member_id";
    if (before.some((word) => word === "account" || word === "acct" || word === "claim")) return "account";
    if (before.some((word) => word === "device" || word === "serial")) return "device_id";
  }
  if ((head === "date" || head === "dt") && before.some((word) => PERSON_EVENTS.has(word))) return "date";
  return null;
}

/** A header row's cells: two to thirty bare words separated by `separator`. */
const headerCells = (separator: string) =>
  String.raw`((?:"?[A-Za-z][A-Za-z0-9_]{0,29}"?${separator}){1,29}"?[A-Za-z][A-Za-z0-9_]{0,29}"?)(?=\s|$)`;

/**
 * Commas; semicolons, as European spreadsheets write CSV; tabs, as a pasted table has them. With
 * commas, a header may follow a label on its line ("columns: last,first,dob"); with semicolons and
 * tabs, which prose is full of, only a header that starts its line is tried. `tight` is what a
 * header needs somewhere (a separator between two words, no space around it: prose's ", " is
 * none), found before the header's pattern is tried.
 */
const CSV_FORMATS = [
  {
    separator: ",",
    header: new RegExp(String.raw`(?<=^|[\s:>\x60'"(])${headerCells(",")}`, "gm"),
    tight: /\w"?,"?[A-Za-z]/,
  },
  { separator: ";", header: new RegExp(`^[ ]{0,8}${headerCells(";")}`, "gm"), tight: /\w"?;"?[A-Za-z]/ },
  { separator: "\t", header: new RegExp(`^[ ]{0,8}${headerCells("\t")}`, "gm"), tight: /\w"?\t"?[A-Za-z]/ },
] as const;
type CsvFormat = (typeof CSV_FORMATS)[number];

/** An age column holds an identifier only over 89 (Safe Harbor). */
const OVER_89 = /^\s*(?:9\d|1[0-2]\d)\s*$/;

/**
 * A row's fields as written, quotes included, split at each separator outside double quotes: a
 * quoted field may hold the separator ("Kowalski, Adam"), and `""` inside quotes is a quote.
 */
function splitRow(row: string, separator: string): string[] {
  if (!row.includes('"')) return row.split(separator);
  const fields: string[] = [];
  let quoted = false;
  let from = 0;
  for (let k = 0; k < row.length; k++) {
    const char = row.charAt(k);
    if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      fields.push(row.slice(from, k));
      from = k + 1;
    }
  }
  fields.push(row.slice(from));
  return fields;
}

function csv(text: string, spans: SegmentSpan[], { separator, header }: CsvFormat): void {
  header.lastIndex = 0;
  for (let match = header.exec(text); match !== null; match = header.exec(text)) {
    const headers = (match[1] ?? "").split(separator);
    const kinds = headers.map(columnKind);
    if (!kinds.some((kind) => kind !== null)) continue;
    let at = match.index + match[0].length;
    // Rows follow on their own lines, or, with commas, on the same line separated by spaces when pasted flat.
    const sameLine = text.charAt(at) !== "\n" && text.charAt(at) !== "\r";
    if (sameLine && separator !== ",") continue;
    for (let rows = 0; rows < 1000; rows++) {
      const rest = text.slice(at);
      const row = sameLine ? /^[ \t]+([^\s,]*(?:,[^\s,]*)+)/.exec(rest) : /^\r?\n([^\n]*)/.exec(rest);
      const fields = row?.[1] === undefined ? undefined : splitRow(row[1], separator);
      if (row === null || fields === undefined || fields.length !== headers.length) break;
      let fieldAt = at + row[0].length - (row[1] ?? "").length;
      fields.forEach((field, index) => {
        const kind = kinds[index];
        if (kind === "age" && !OVER_89.test(field)) {
          // A younger age is no identifier.
        } else if (kind !== null && kind !== undefined && !/^\s*\[[A-Z_]+\]\s*$/.test(field)) {
          push(
            spans,
            kind,
            fieldAt,
            field.replace(/^"|"$/g, (quote) => " ".repeat(quote.length)),
          );
        }
        fieldAt += field.length + 1;
      });
      at += row[0].length;
      header.lastIndex = at;
    }
  }
}

/**
 * A FHIR reference to a person's resource (the id after `Patient/`), a search by identifier
 * (`?identifier=system|value`, the value after the bar) and an identifier's value in a resource
 * (`"identifier": [{"system": …, "value": "MRN-20931"}]`): each identifies someone.
 */
const FHIR_REFERENCE =
  /\b(?:Patient|Person|RelatedPerson)\/([A-Za-z0-9\-.]{1,64})|[?&]identifier=(?:[^|&\s]{0,128}(?:\||%7C))?([A-Za-z0-9\-.]{1,64})|"identifier"\s{0,2}:\s{0,2}\[?\s{0,2}\{[^{}]{0,256}?"value"\s{0,2}:\s{0,2}"([A-Za-z0-9\-.]{1,64})"/gi;

function fhir(text: string, spans: SegmentSpan[]): void {
  FHIR_REFERENCE.lastIndex = 0;
  for (let match = FHIR_REFERENCE.exec(text); match !== null; match = FHIR_REFERENCE.exec(text)) {
    const id = match[1] ?? match[2] ?? match[3] ?? "";
    const end = match.index + match[0].length - (match[3] === undefined ? 0 : 1);
    if (/\d/.test(id)) push(spans, "mrn", end - id.length, id);
  }
}

/** A person's resource's own id, next to its type: `"resourceType": "Patient", "id": "pat-00881"`. */
const FHIR_PERSON_ID =
  /"resourceType"\s{0,2}:\s{0,2}"(?:Patient|Person|RelatedPerson)"\s{0,2},\s{0,2}"id"\s{0,2}:\s{0,2}"([A-Za-z0-9\-.]{1,64})"|"id"\s{0,2}:\s{0,2}"([A-Za-z0-9\-.]{1,64})"(?=\s{0,2},\s{0,2}"resourceType"\s{0,2}:\s{0,2}"(?:Patient|Person|RelatedPerson)")/g;
/** A FHIR HumanName's parts, a string or a list of strings: `"family": "du Marché"`, `"given": ["Peter", "James"]`. */
const FHIR_NAME_PART = /"(?:family|given)"\s{0,2}:\s{0,2}(\[[^[\]{}]{0,300}\]|"[^"\n]{1,80}")/g;
const JSON_STRING = /"([^"\n]{1,80})"/g;

/** A FHIR Patient's id, and every part of a HumanName, whatever its words ("du Marché" is a surname). */
function fhirPerson(text: string, spans: SegmentSpan[]): void {
  FHIR_PERSON_ID.lastIndex = 0;
  for (let match = FHIR_PERSON_ID.exec(text); match !== null; match = FHIR_PERSON_ID.exec(text)) {
    const id = match[1] ?? match[2] ?? "";
    // Either way the match ends with the id's closing quote.
    if (/\d/.test(id)) push(spans, "mrn", match.index + match[0].length - id.length - 1, id);
  }
  FHIR_NAME_PART.lastIndex = 0;
  for (let match = FHIR_NAME_PART.exec(text); match !== null; match = FHIR_NAME_PART.exec(text)) {
    const value = match[1] ?? "";
    const valueAt = match.index + match[0].length - value.length;
    JSON_STRING.lastIndex = 0;
    for (let part = JSON_STRING.exec(value); part !== null; part = JSON_STRING.exec(value)) {
      const name = part[1] ?? "";
      if (/\p{L}/u.test(name)) push(spans, "name", valueAt + part.index + 1, name);
    }
  }
}

/** A line of a pipe table ("| Pt # | Bed |", "Chart | Name"): its cells, with where each starts. */
function pipeCells(line: string, at: number): Array<{ text: string; start: number }> {
  const cells: Array<{ text: string; start: number }> = [];
  let from = 0;
  for (let k = 0; k <= line.length; k++) {
    if (k < line.length && line.charAt(k) !== "|") continue;
    cells.push({ text: line.slice(from, k), start: at + from });
    from = k + 1;
  }
  // The outer bars of "| a | b |" leave an empty cell at each end.
  if (cells.length > 1 && cells[0]?.text.trim() === "") cells.shift();
  if (cells.length > 1 && cells[cells.length - 1]?.text.trim() === "") cells.pop();
  return cells;
}

/** A header cell: a few words ("Pt #", "Chart", "Member ID"). */
const HEADER_CELL = /^\s*[A-Za-z][A-Za-z0-9 #._/-]{0,29}\s*$/;
/** The line under a Markdown table's header, "|---|:--:|", or under psql's, "----+----". */
const RULE_LINE = /^\s*\|?\s*:?-{2,}:?\s*(?:[|+]\s*:?-{2,}:?\s*)*\|?\s*$/;

/**
 * A pipe table, as Markdown and pasted grids write it: a header whose cells name what the columns
 * hold ("| Pt # | Bed | Diet |"), then rows with as many cells ("| 340012 | 4B | NPO |").
 */
function pipeTable(text: string, spans: SegmentSpan[]): void {
  const lines = text.split("\n");
  let at = 0;
  for (let i = 0; i < lines.length; at += (lines[i] ?? "").length + 1, i++) {
    const line = lines[i] ?? "";
    if (!line.includes("|")) continue;
    const headers = pipeCells(line, at);
    if (headers.length < 2 || !headers.every((cell) => HEADER_CELL.test(cell.text))) continue;
    const kinds = headers.map((cell) => columnKind(cell.text));
    if (!kinds.some((kind) => kind !== null)) continue;
    let rowAt = at + line.length + 1;
    let j = i + 1;
    if (RULE_LINE.test(lines[j] ?? "")) {
      rowAt += (lines[j] ?? "").length + 1;
      j++;
    }
    for (; j < lines.length; rowAt += (lines[j] ?? "").length + 1, j++) {
      const cells = pipeCells(lines[j] ?? "", rowAt);
      if (cells.length !== headers.length) break;
      cells.forEach((cell, index) => {
        const kind = kinds[index];
        if (kind === "age" ? OVER_89.test(cell.text) : kind !== null && kind !== undefined)
          push(spans, kind as SegmentSpan["kind"], cell.start, cell.text);
      });
    }
  }
}

/**
 * An XML or HTML element whose tag says what it holds, read as a column's name (`columnKind`):
 * `<PatientMRN>00912374</PatientMRN>`, `<given>Ana</given>`, `<ns:homeZip>02139</ns:homeZip>`. A
 * bare `<name>` is a drug's or a clinic's as often as a person's, and counts as none.
 */
const XML_ELEMENT = /<((?:[A-Za-z][\w-]{0,20}:)?([A-Za-z][\w-]{0,40}))(?:\s[^<>]{0,200})?>([^<>\n]{1,80})<\/\1>/g;

function xmlElements(text: string, spans: SegmentSpan[]): void {
  XML_ELEMENT.lastIndex = 0;
  for (let match = XML_ELEMENT.exec(text); match !== null; match = XML_ELEMENT.exec(text)) {
    const tag = match[2] ?? "";
    const value = match[3] ?? "";
    const kind = tag.toLowerCase() === "name" ? null : columnKind(tag);
    if (kind === null || (kind === "age" && !OVER_89.test(value))) continue;
    // The value starts right after the opening tag, which holds no ">".
    push(spans, kind, match.index + match[0].indexOf(">") + 1, value);
  }
}

/**
 * A document's file name, as scanners, exports and fax inboxes write them: parts between "_", "-"
 * and ".", before a document's, an image's, a recording's or an export's extension (not a
 * configuration's: "payer_aetna.json"). Inside a URL the URL's detector reads it whole.
 */
export const DOCUMENT_EXTENSIONS = "pdf|tiff?|jpe?g|png|heic|docx?|rtf|csv|xlsx?|hl7|dcm|x12|edi|wav|mp3|m4a";
const FILE_NAME = new RegExp(
  String.raw`(?<![\p{L}\p{N}.-])((?:[\p{L}\p{N}]+[_\-.])+[\p{L}\p{N}]+)\.(?:${DOCUMENT_EXTENSIONS})(?![\p{L}\p{N}])`,
  "giu",
);
/** A document's extension somewhere in the text: what `FILE_NAME` needs, found without it. */
const DOCUMENT_EXTENSION = new RegExp(String.raw`\.(?:${DOCUMENT_EXTENSIONS})\b`, "i");
/** A number a file's part names by its prefix: "acct55019283", "MRN00912374", "CLM55012983", "age94". */
const FILE_NUMBER = /^(?:(acct|account|clm|claim)|(mrn|mr|chart|pt|pat|patient)|(mbr|member|sub)|(age))(\d+)$/i;
/** The kind `FILE_NUMBER`'s prefix group names, by the group's number. */
const FILE_NUMBER_KINDS = [undefined, "account", "mrn", "member_id", "age"] as const;
/** A made-up person's file: a fixture's, a test's, a sample's. */
const MADE_UP_FILE = /test|sample|example|fake|dummy|fixture|mock|seed|synthetic|template/i;

function fileNames(text: string, spans: SegmentSpan[]): void {
  const { names, common, commonElsewhere, orgs, places, medical } = vocab();
  FILE_NAME.lastIndex = 0;
  for (let match = FILE_NAME.exec(text); match !== null; match = FILE_NAME.exec(text)) {
    const stem = match[1] ?? "";
    const tokenStart = Math.max(text.lastIndexOf(" ", match.index), text.lastIndexOf("\n", match.index)) + 1;
    if (MADE_UP_FILE.test(stem) || text.slice(tokenStart, match.index).includes("://")) continue;
    const parts: Array<{ text: string; start: number; name: number }> = [];
    let at = match.index;
    for (const part of stem.split(/[_\-.]/)) {
      const folded = fold(part);
      // 2: a name only a name list knows; 1: a name that is a word too, or an initial; 0: no name.
      const name = !/^\p{L}+$/u.test(part)
        ? 0
        : part.length === 1
          ? 1
          : !names.has(folded)
            ? 0
            : common.has(folded) ||
                commonElsewhere.has(folded) ||
                orgs.has(folded) ||
                places.has(folded) ||
                medical.has(folded)
              ? 1
              : 2;
      parts.push({ text: part, start: at, name });
      const number = FILE_NUMBER.exec(part);
      const digits = number?.[5] ?? "";
      const kind =
        number === null ? undefined : FILE_NUMBER_KINDS[[1, 2, 3, 4].find((g) => number[g] !== undefined) ?? 0];
      if (kind !== undefined && (kind === "age" ? OVER_89.test(digits) : digits.length >= 4))
        push(spans, kind, at + part.length - digits.length, digits);
      at += part.length + 1;
    }
    // A run of name parts with one that only a name list knows: "OKAFOR_EMEKA", "rivera_j", "Jane_Doe".
    for (let i = 0; i < parts.length; i++) {
      let end = i;
      while (end < parts.length && (parts[end]?.name ?? 0) > 0) end++;
      const run = parts.slice(i, end);
      if (run.some((part) => part.name === 2)) for (const part of run) push(spans, "name", part.start, part.text);
      i = end;
    }
  }
}

/** `INSERT INTO table (columns) VALUES (…), (…)`: the columns, then where the first row starts. */
const SQL_INSERT = /\binsert\s{1,4}into\s{1,4}([\w."`[\]]{1,64})\s{0,4}\(([^()]{1,2000})\)\s{0,4}values\s{0,4}(?=\()/gi;
/** A table of people, whose bare `name` column is a person's (a clinic's or a plan's is not). */
const PEOPLE_TABLE =
  /patient|contact|person|people|member|user|staff|guarantor|caregiver|subscriber|client|employee|nurse|doctor|physician|famil|relative|resident|customer|guardian|proxy/i;

/**
 * The rows of a SQL insert, as seed scripts and bug reports paste them:
 * `INSERT INTO patients (mrn, given, family) VALUES ('A0047721', 'Wren', 'Calloway')`. Each value
 * is what its column's name says (`columnKind`), in quotes or bare; `NULL`, `DEFAULT` and calls
 * are no one's.
 */
function sqlInsert(text: string, spans: SegmentSpan[]): void {
  SQL_INSERT.lastIndex = 0;
  for (let match = SQL_INSERT.exec(text); match !== null; match = SQL_INSERT.exec(text)) {
    const people = PEOPLE_TABLE.test(match[1] ?? "");
    const kinds = (match[2] ?? "").split(",").map((column) => {
      const bare = column.replace(/[`"[\]\s]/g, "");
      // A bare "name" column is a person's only in a table of people.
      return bare.toLowerCase() === "name" && !people ? null : columnKind(bare);
    });
    if (!kinds.some((kind) => kind !== null)) continue;
    let at = match.index + match[0].length;
    for (let rows = 0; rows < 1000 && text.charAt(at) === "("; rows++) {
      at = sqlRow(text, at + 1, kinds, spans);
      const next = /^\s{0,4},\s{0,4}(?=\()/.exec(text.slice(at, at + 10));
      if (next === null) break;
      at += next[0].length;
    }
    SQL_INSERT.lastIndex = Math.max(SQL_INSERT.lastIndex, at);
  }
}

/** One row's values from `at` (just past its opening bracket); returns where it ends. */
function sqlRow(
  text: string,
  at: number,
  kinds: ReadonlyArray<SegmentSpan["kind"] | null>,
  spans: SegmentSpan[],
): number {
  let column = 0;
  let k = at;
  while (k < text.length) {
    while (text.charAt(k) === " " || text.charAt(k) === "\t" || text.charAt(k) === "\n") k++;
    const kind = kinds[column];
    if (text.charAt(k) === "'") {
      // A quoted string, '' inside it being a quote.
      let end = k + 1;
      while (end < text.length && !(text.charAt(end) === "'" && text.charAt(end + 1) !== "'"))
        end += text.charAt(end) === "'" ? 2 : 1;
      const value = text.slice(k + 1, end);
      if (kind !== null && kind !== undefined && (kind !== "age" || OVER_89.test(value)))
        push(spans, kind, k + 1, value);
      k = end + 1;
    } else {
      // Bare: a number, NULL, DEFAULT or a call, up to the next comma or the row's end.
      let depth = 0;
      const start = k;
      while (k < text.length && !(depth === 0 && (text.charAt(k) === "," || text.charAt(k) === ")"))) {
        if (text.charAt(k) === "(") depth++;
        else if (text.charAt(k) === ")") depth--;
        else if (text.charAt(k) === "\n") return k;
        k++;
      }
      const value = text.slice(start, k).trim();
      if (
        kind !== null &&
        kind !== undefined &&
        /^[\w.+-]+$/.test(value) &&
        /\d/.test(value) &&
        (kind !== "age" || OVER_89.test(value))
      )
        push(spans, kind, start, text.slice(start, k));
    }
    while (text.charAt(k) === " " || text.charAt(k) === "\t") k++;
    if (text.charAt(k) === ",") {
      column++;
      k++;
      continue;
    }
    return text.charAt(k) === ")" ? k + 1 : k;
  }
  return k;
}

/** Identifiers in the HL7 v2 and X12 segments, CSV rows, pipe tables, FHIR references, XML elements and SQL inserts of `text`. */
export function findSegmentIdentifiers(text: string): SegmentSpan[] {
  const spans: SegmentSpan[] = [];
  if (text.includes("|")) hl7(text, spans);
  if (text.includes("*")) x12(text, spans);
  for (const format of CSV_FORMATS) if (format.tight.test(text)) csv(text, spans, format);
  if (text.includes("|")) pipeTable(text, spans);
  if (text.includes("/") || text.includes("identifier")) fhir(text, spans);
  if (text.includes('"resourceType"') || text.includes('"family"') || text.includes('"given"')) fhirPerson(text, spans);
  if (text.includes("</")) xmlElements(text, spans);
  if (text.includes(".") && DOCUMENT_EXTENSION.test(text)) fileNames(text, spans);
  if (text.includes("INSERT") || text.includes("insert") || text.includes("Insert")) sqlInsert(text, spans);
  return spans;
}
