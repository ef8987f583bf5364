/**
 * A model file shipped beside the code (`name-model.json`, `number-model.json`): read and checked
 * once, on first use, or null when none was trained yet (the rules still run). A trainer may put
 * a model built in memory in its place.
 */
import { readFileSync } from "node:fs";

export interface Shipped<T> {
  get(): T | null;
  use(model: T | null): void;
}

export function shipped<T>(path: string, load: (json: unknown) => T): Shipped<T> {
  let loaded: T | null | undefined;
  return {
    get() {
      if (loaded === undefined) {
        try {
          loaded = load(JSON.parse(readFileSync(path, "utf8")));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          loaded = null;
        }
      }
      return loaded;
    },
    use(model) {
      loaded = model;
    },
  };
}
