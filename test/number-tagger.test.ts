/**
 * The number tagger (core/safety/number-tagger.ts): which tokens it is asked about, that its
 * features read only what lies near a token (so a later pass decides as a whole-text pass
 * would), and how redaction uses it: after the rules, never on what a rule keeps, with the kind
 * of the nearest cue. A tagger that takes every token it is asked about stands in for the trained
 * one where the test is about the plumbing; the shipped model is measured by `npm run eval:safety`.
 */
import { afterEach, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { redact } from "../core/redact.ts";
import {
  AFTER,
  BEFORE,
  NumberTagger,
  numberCandidates,
  numberFeatures,
  numberTagger,
  useNumberTagger,
} from "../core/safety/number-tagger.ts";

const shipped = numberTagger();
afterEach(() => useNumberTagger(shipped));

/** A tagger whose every score is `score`: it takes every token it is asked about, or none. */
function constantTagger(score: number): NumberTagger {
  const bits = 4;
  return new NumberTagger({
    format: 1,
    version: "test",
    bits,
    bias: score,
    threshold: 0,
    scale: 1,
    weights: Buffer.from(new Int16Array(1 << bits).buffer).toString("base64"),
    trainedOn: { cases: 0, candidates: 0, identifiers: 0 },
    crossValidation: {},
  });
}

const tokens = (text: string) => numberCandidates(text).map(({ start, end }) => text.slice(start, end));

describe("candidates", () => {
  test("runs of letters and digits with two digits or more, parts joined by - . / : # _, digit groups by a space", () => {
    expect(tokens("pid=9001247, chart MR/88/0041 and 0044-7712-9")).toEqual(["9001247", "MR/88/0041", "0044-7712-9"]);
    expect(tokens("card ZMK 8842 1093 00 on file")).toEqual(["8842 1093 00"]);
    expect(tokens("step 1 of v2, room 12B, at 10:30")).toEqual(["12B", "10:30"]);
    expect(tokens("[MRN]-0120 and [NAME] 44")).toEqual(["0120", "44"]);
    expect(tokens("no digits here")).toEqual([]);
  });

  test("not a version: three or four short numbers joined by dots", () => {
    expect(tokens("SSN: 1.2.3, v10.4.12 and 2.0.1.7; dated 12.03.2024, ip 10.20.30.40.50")).toEqual([
      "12.03.2024",
      "10.20.30.40.50",
    ]);
  });

  test("every candidate holds two digits, and candidates never overlap", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."ab AB12_-./:#[]=\n09"), maxLength: 80 }), (text) => {
        let last = 0;
        for (const { start, end } of numberCandidates(text)) {
          expect(start).toBeGreaterThanOrEqual(last);
          expect(text.slice(start, end).replace(/\D/g, "").length).toBeGreaterThanOrEqual(2);
          last = end;
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("features", () => {
  test("only the text within BEFORE characters before a token and AFTER after it counts", () => {
    // Few words: the five words nearest a token must not all lie inside its window.
    const unit = fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(..."  7 -: 1") },
      fc.constantFrom("a", "Xy", "[NAME]", "é"),
    );
    fc.assert(
      fc.property(
        fc.string({ unit, minLength: BEFORE, maxLength: 90 }),
        fc.string({ unit, minLength: AFTER, maxLength: 90 }),
        fc.string({ unit: fc.constantFrom(..."qrs QRS [MRN] no# 8 ü"), maxLength: 40 }),
        (before, after, far) => {
          const token = "4471-0120";
          const text = `${before} ${token} ${after}`;
          const start = before.length + 1;
          const end = start + token.length;
          // The same window, with other text beyond both of its ends.
          const elsewhere = `${far}${text.slice(start - BEFORE, end + AFTER)}${far}`;
          const at = far.length + BEFORE;
          expect(numberFeatures(elsewhere, at, at + token.length, 16)).toEqual(numberFeatures(text, start, end, 16));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("case does not matter in the words around a token; the words do", () => {
    const at = (text: string) => {
      const start = text.indexOf("9001247");
      return numberFeatures(text, start, start + 7, 16);
    };
    expect(at("Chart No: 9001247 today")).toEqual(at("chart no: 9001247 TODAY"));
    expect(at("chart no: 9001247")).not.toEqual(at("order no: 9001247"));
  });
});

describe("in redaction", () => {
  test("the tagger reads what the rules leave, with their placeholders, and is not asked about what a rule keeps", () => {
    useNumberTagger(constantTagger(1));
    // The rules find the SSN; the tagger takes the number under a key no rule knows.
    expect(redact("ssn 123-45-6789, owner=7709213")).toBe("ssn [SSN], owner=[MRN]");
    // A version said to be one, an ICD-10 code, a CPT code and a blood pressure are a rule's to keep.
    const kept = "version 2.14.1, E11.9, CPT 80053, BP 182/110";
    expect(redact(kept)).toBe(kept);
    useNumberTagger(constantTagger(-1));
    expect(redact("ssn 123-45-6789, owner=7709213")).toBe("ssn [SSN], owner=7709213");
  });

  test("the kind is the nearest cue's, a date's by its shape, else a record number's", () => {
    useNumberTagger(constantTagger(1));
    expect(redact("the plate on the van, 7 7 1 2")).toBe("the plate on the van, [VEHICLE]");
    expect(redact("seen 3/7 again")).toBe("seen [DATE] again");
    expect(redact("merged 88123 into it")).toBe("merged [MRN] into it");
  });

  test("with the tagger on, redaction still reaches a fixed point: redact(redact(x)) = redact(x)", () => {
    useNumberTagger(constantTagger(1));
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            "owner=7709213",
            "[NAME]",
            "Maria Lopez",
            "4471-0120",
            "v1.2.3",
            "seen 3/7",
            "zip 60623",
            "ok",
          ),
          { maxLength: 8 },
        ),
        (parts) => {
          const once = redact(parts.join(" "));
          expect(redact(once)).toBe(once);
        },
      ),
      { numRuns: 200 },
    );
  });
});
