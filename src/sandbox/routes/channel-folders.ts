/** POST /channel_folders/create (administrators) and GET /channel_folders. */
import { badRequest } from "../http/api-error.ts";
import { endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/delivery.ts";
import { nextId } from "../state/data.ts";
import { renderDescription } from "../state/streams.ts";
import { requireAdmin } from "./realm.ts";

const MAX_NAME = 60;
const MAX_DESCRIPTION = 1024;

export const channelFolderRoutes = [
  route("/channel_folders/create", {
    POST: endpoint(({ core, user, params }) => {
      requireAdmin(user);
      const name = params.requiredStr("name").trim();
      const description = params.requiredStr("description").trim();
      if (name === "") throw badRequest("Channel folder name can't be empty.");
      if ([...name].length > MAX_NAME) throw badRequest(`name is too long (limit: ${MAX_NAME} characters)`);
      if ([...description].length > MAX_DESCRIPTION) {
        throw badRequest(`description is too long (limit: ${MAX_DESCRIPTION} characters)`);
      }
      if (
        core.data.channelFolders.some((f) => f.name.toLowerCase() === name.toLowerCase() && !f.is_archived)
      ) {
        throw badRequest(`Channel folder name already in use`);
      }
      const id = nextId(core.data, "folder");
      const folder = {
        id,
        name,
        description,
        rendered_description: renderDescription(description),
        order: id,
        creator_id: user.user_id,
        date_created: core.nowSeconds(),
        is_archived: false,
      };
      core.data.channelFolders.push(folder);
      const everyone = core.data.users.filter((u) => u.is_active).map((u) => u.user_id);
      emitToUsers(core, everyone, { type: "channel_folder", op: "add", channel_folder: { ...folder } });
      return { channel_folder_id: id };
    }),
  }),
  route("/channel_folders", {
    GET: endpoint(({ core, params }) => {
      const includeArchived = params.bool("include_archived") ?? false;
      return {
        channel_folders: core.data.channelFolders
          .filter((f) => includeArchived || !f.is_archived)
          .map((f) => ({ ...f })),
      };
    }),
  }),
];
