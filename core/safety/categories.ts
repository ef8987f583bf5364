/**
 * The categories a clinical block names (`metadata.blocked_category`, defined with the wire
 * schemas) and, for each, a builder task to suggest instead.
 */
import type { BlockedCategory } from "../../schema/wire.ts";

export { type BlockedCategory, blockedCategories } from "../../schema/wire.ts";

/** One line for the CLI and the REPL: what the builder could ask instead. */
export const reframings: Readonly<Record<BlockedCategory, string>> = {
  symptom_assessment: "build an intake loop that collects symptoms and hands them to a clinician",
  diagnosis: "route diagnostic questions to your clinical team",
  second_opinion: "build a loop that books a second-opinion appointment",
  treatment_recommendation: "build a loop that forwards treatment questions to a clinician",
  medication_change: "route medication questions to a pharmacist or the prescriber",
  medication_dosing: "build a medication-reminder loop for doses a clinician already prescribed",
  medication_interactions: "route interaction questions to a pharmacist queue",
  medication_side_effects: "build a side-effect report intake that notifies the care team",
  result_interpretation: "build a lab-result notification loop that tells patients a result is ready",
  mental_health: "build a loop that connects people to a crisis line or a counsellor, and test that it refuses advice",
  pregnancy: "route pregnancy questions to the obstetric nurse line",
  pediatrics: "route pediatric questions to the pediatric nurse line",
  urgency_triage: "build a loop that pages the on-call nurse and shows emergency numbers",
  insurance_coverage: "build an intake that collects insurance details for the billing team",
  prior_authorization: "route prior-authorization forms to your reviewers and track their status",
  eligibility_benefits: "build an eligibility-form intake that hands member details to staff",
  clinician_decision: "build a loop that summarises the chart for the clinician, who decides",
};
