// The PostgreSQL migrations, generated from schema/pg-tables.ts into drizzle-pg/ (the SQLite ones
// come from drizzle.config.ts into drizzle/). `npm run db:generate` runs both.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./schema/pg-tables.ts",
  out: "./drizzle-pg",
});
