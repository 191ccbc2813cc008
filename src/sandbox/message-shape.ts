/**
 * A message as the sandbox serves it to its sender (GET /messages, message events), with raw
 * Markdown content: the shape `control.messageView` returns and the testing kit hands to tests.
 */

/** A person of a direct message, as the server lists them in `display_recipient`. */
export interface SandboxRecipient {
  id: number;
  email: string;
  full_name: string;
}

/** A reaction on a message. */
export interface SandboxReaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

interface SandboxMessageBase {
  id: number;
  sender_id: number;
  sender_email: string;
  sender_full_name: string;
  /** Raw Markdown, as sent. */
  content: string;
  /** UNIX seconds (the sandbox clock). */
  timestamp: number;
  recipient_id: number;
  reactions: SandboxReaction[];
  /** The client name recorded on the message. */
  client: string;
  /** Set once the message was edited (UNIX seconds). */
  last_edit_timestamp?: number;
}

/** A channel message: `display_recipient` is the channel's name, `subject` its topic. */
export interface SandboxChannelMessage extends SandboxMessageBase {
  type: "stream";
  stream_id: number;
  display_recipient: string;
  subject: string;
}

/** A direct message: `display_recipient` lists everyone in the conversation, the sender included. */
export interface SandboxDirectMessage extends SandboxMessageBase {
  type: "private";
  display_recipient: SandboxRecipient[];
  /** Always "" for a direct message. */
  subject: "";
}

/** A message as the server serves it; narrow on `type` to read the channel or the people. */
export type SandboxMessage = SandboxChannelMessage | SandboxDirectMessage;
