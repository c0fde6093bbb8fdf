// Small Kubernetes meta types the CronJob API embeds. Where an upstream OpenAPI definition exists, the
// schema carries its name in `k8sOpenAPI`, and the CRD generator substitutes the upstream (structural,
// described) schema for it; the zod side keeps the checks and the TypeScript type.
import { z } from "zod";

/** Metadata key naming the upstream OpenAPI definition that the CRD generator uses for this schema. */
export const K8S_OPENAPI = "k8sOpenAPI";

/** An RFC 3339 timestamp as the apiserver serialises metav1.Time (second precision, UTC "Z"). */
export const TimeSchema = z.iso.datetime({ offset: true }).meta({ format: "date-time" });

export const ObjectReferenceSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    namespace: z.string().optional(),
    name: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    fieldPath: z.string().optional(),
  })
  .meta({ [K8S_OPENAPI]: "io.k8s.api.core.v1.ObjectReference" });
export type ObjectReference = z.infer<typeof ObjectReferenceSchema>;

const ConditionStatusSchema = z.enum(["True", "False", "Unknown"]);

export const ConditionSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(
        /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
      ),
    status: ConditionStatusSchema,
    observedGeneration: z.int().min(0).optional(),
    lastTransitionTime: TimeSchema,
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
    message: z.string().max(32768),
  })
  .meta({ [K8S_OPENAPI]: "io.k8s.apimachinery.pkg.apis.meta.v1.Condition" });
export type Condition = z.infer<typeof ConditionSchema>;

/** The metadata of an object as it appears on the wire (only the parts this project reads). */
export const ObjectMetaSchema = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: TimeSchema.optional(),
  deletionTimestamp: TimeSchema.optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z
    .array(
      z.looseObject({
        apiVersion: z.string(),
        kind: z.string(),
        name: z.string(),
        uid: z.string(),
        controller: z.boolean().optional(),
        blockOwnerDeletion: z.boolean().optional(),
      }),
    )
    .optional(),
});

/**
 * The same metadata with the wire's JSON types only (timestamps are RFC 3339 strings, unchecked): what any
 * object read from the API server has, whatever its values.
 */
export const WireObjectMetaSchema = ObjectMetaSchema.extend({
  generation: z.number().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
});
