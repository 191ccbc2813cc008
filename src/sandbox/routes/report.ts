/** POST /messages/{message_id}/report, with the server's order of checks (NOTES §11). */
import { badRequest, missingArgument } from "../http/api-error.ts";
import { endpoint, route } from "../http/router.ts";
import { accessMessage } from "../state/message-access.ts";
import { REPORT_REASONS, sendReport } from "../state/report.ts";

export const reportRoutes = [
  route("/messages/{message_id:int}/report", {
    POST: endpoint(({ core, user, params, path }) => {
      const type = params.literal("report_type", Object.keys(REPORT_REASONS));
      if (type === undefined) throw missingArgument("report_type");
      const description = params.str("description") ?? "";
      if ([...description].length > 1000)
        throw badRequest("description is too long (limit: 1000 characters)");
      if (type === "other" && description.trim() === "") throw badRequest("An explanation is required.");
      if (core.data.realm.moderation_request_channel_id === null) {
        throw badRequest("Message reporting is not enabled in this organization.");
      }
      const msg = accessMessage(core.data, user, Number(path.message_id));
      sendReport(core, user, msg, type, description);
      return {};
    }),
  }),
];
