/** GET /messages (anchored windows over a narrow) and GET /messages/{message_id}. */
import { badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { accessMessage, flagsOf } from "../state/message-access.ts";
import {
  buildFilter,
  type NarrowTerm,
  parseNarrowParam,
  searchableMessages,
} from "../state/message-filter.ts";
import { messageToApi } from "../state/message-view.ts";

const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;
const MAX_MESSAGES_PER_FETCH = 5000;

function getMessages(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const anchorRaw = params.str("anchor");
  const includeAnchor = params.bool("include_anchor") ?? true;
  const numBefore = params.int("num_before");
  const numAfter = params.int("num_after");
  const narrowJson = params.json("narrow");
  const clientGravatar = params.bool("client_gravatar") ?? true;
  const applyMarkdown = params.bool("apply_markdown") ?? true;
  const useFirstUnread = params.bool("use_first_unread_anchor") ?? false;
  const allowEmptyTopicName = params.bool("allow_empty_topic_name") ?? false;
  const messageIds = params.intList("message_ids");
  const terms: NarrowTerm[] = narrowJson ? parseNarrowParam(narrowJson.value) : [];
  const view = (m: (typeof data.messages)[number]) => ({
    ...messageToApi(data, m, user, { applyMarkdown, clientGravatar, allowEmptyTopicName }),
    flags: flagsOf(m, user),
  });
  const matches = buildFilter(data, user, terms);
  const candidates = searchableMessages(data, user, terms).filter(matches);

  if (messageIds !== undefined) {
    const wanted = new Set(messageIds);
    return { messages: candidates.filter((m) => wanted.has(m.id)).map(view), history_limited: false };
  }
  if (numBefore === undefined) throw missingArgument("num_before");
  if (numAfter === undefined) throw missingArgument("num_after");
  if (numBefore < 0 || numAfter < 0) throw badRequest("Invalid num_before or num_after");
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) {
    throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  }
  let anchor: number;
  const me = String(user.user_id);
  if (anchorRaw === "first_unread" || (anchorRaw === undefined && useFirstUnread)) {
    anchor =
      candidates.find((m) => m.flags[me] !== undefined && !m.flags[me]!.includes("read"))?.id ??
      LARGER_THAN_MAX_MESSAGE_ID;
  } else if (anchorRaw === "newest") anchor = LARGER_THAN_MAX_MESSAGE_ID;
  else if (anchorRaw === "oldest") anchor = 0;
  else if (anchorRaw === undefined) throw missingArgument("anchor");
  else if (/^-?\d+$/.test(anchorRaw))
    anchor = Math.max(0, Math.min(Number(anchorRaw), LARGER_THAN_MAX_MESSAGE_ID));
  else throw badRequest("Invalid anchor");

  const toRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const toLeft = anchor === 0;
  const before =
    numBefore === 0 ? [] : candidates.filter((m) => (toRight ? true : m.id < anchor)).slice(-numBefore);
  const atAnchor = includeAnchor && !toRight ? candidates.filter((m) => m.id === anchor) : [];
  const after = toRight || numAfter === 0 ? [] : candidates.filter((m) => m.id > anchor).slice(0, numAfter);
  return {
    messages: [...before, ...atAnchor, ...after].map(view),
    anchor,
    found_anchor: atAnchor.length === 1,
    found_oldest: toLeft || before.length < numBefore,
    found_newest: toRight || after.length < numAfter,
    history_limited: false,
  };
}

export const messagesGetRoutes = [
  route("/messages", { GET: endpoint(getMessages) }),
  route("/messages/{message_id:int}", {
    GET: endpoint(({ core, user, params, path }) => {
      const applyMarkdown = params.bool("apply_markdown") ?? true;
      const allowEmptyTopicName = params.bool("allow_empty_topic_name") ?? false;
      const msg = accessMessage(core.data, user, Number(path.message_id));
      return {
        raw_content: msg.content,
        message: {
          ...messageToApi(core.data, msg, user, {
            applyMarkdown,
            clientGravatar: false,
            allowEmptyTopicName,
          }),
          flags: flagsOf(msg, user),
        },
      };
    }),
  }),
];
