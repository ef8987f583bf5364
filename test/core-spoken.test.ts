import { describe, expect, test } from "bun:test";
import { spokenView } from "../core/safety/spoken.ts";

/** The view's runs, as the digits they were read as. */
function runs(text: string): string[] {
  const view = spokenView(text);
  return view === null ? [] : view.runs.map(([from, to]) => view.text.slice(from, to));
}

describe("numbers read out (spoken.ts)", () => {
  test.each([
    ["six oh six harmon avenue", ["606"]],
    ["one twenty seven west maple", ["127"]],
    ["nine eighty one birchwood lane", ["981"]],
    ["four hundred twelve east seventh street", ["412"]],
    ["two thousand twelve was the year", ["2012"]],
    ["born two thousand twelve oh five", ["201205"]],
    ["one two three dash four five dash six seven eight nine", ["123-45-6789"]],
    ["zero six slash one nine slash one nine three four", ["06/19/1934"]],
    ["july four nineteen fifty two", ["4 1952"]],
    ["march eleven twenty twenty five", ["11 2025"]],
    ["4 4 7 one nine 0 2", ["4471902"]],
    ["twenty-five fifty-one", []],
    ["twelve twenty-five fifty-one", ["122551"]],
    ["seventy, eighty-five, ninety-seven, sixty", []],
    ["three five, two nine nine one", ["352991"]],
    ["one or two tablets", []],
    ["we have 3 clinics and 41 providers", []],
  ] as const)("%s reads as %j", (text, expected) => {
    expect(runs(text)).toEqual([...expected]);
  });

  test("every character of the view says where it came from, and the view ends where the text does", () => {
    const text = "lives at six oh six harmon avenue, zip nine four one one zero.";
    const view = spokenView(text);
    expect(view?.text).toBe("lives at 606 harmon avenue, zip 94110.");
    expect(view?.origin.length).toBe((view?.text.length ?? 0) + 1);
    expect(view?.origin[view.text.indexOf("606")]).toBe(text.indexOf("six"));
    expect(view?.origin[view.text.indexOf(" harmon")]).toBe(text.indexOf(" harmon"));
    expect(view?.origin[view.text.length]).toBe(text.length);
  });
});
