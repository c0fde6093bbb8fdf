// The ExclusionCalendars a CronJob names, each by its own GET (`next`: one CronJob, a few calendars, not the
// namespace's list `why` reads); what the plugin makes of them is the model's (model/exclusions.ts).
import { type CalendarRead, ExclusionCalendarResource, CALENDAR_NAME_PATTERN } from "../../../api/v1/index.ts";
import type { Client } from "../../../runtime/client.ts";
import { APIError, isNotFound } from "../../../runtime/errors.ts";

/** GETs each calendar named (`next`): one missing is said, not thrown; nor is one the user may not read. */
export async function getCalendars(
  client: Pick<Client, "get">,
  namespace: string,
  names: readonly string[],
): Promise<CalendarRead[]> {
  return Promise.all(
    names.map(async (name): Promise<CalendarRead> => {
      if (!CALENDAR_NAME_PATTERN.test(name)) return { name, state: "missing" };
      try {
        const c = await client.get<{ spec?: { windows?: unknown } }>(ExclusionCalendarResource, namespace, name);
        return { name, state: "found", windows: c.spec?.windows ?? [] };
      } catch (e) {
        if (isNotFound(e)) return { name, state: "missing" };
        const why = e instanceof APIError && e.reason === "Forbidden" ? "forbidden" : (e as Error).message;
        return { name, state: "unreadable", why };
      }
    }),
  );
}
