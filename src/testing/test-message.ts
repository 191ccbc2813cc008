/**
 * A message as the testing kit hands it to a test: the server's own shape (GET /messages, message
 * events) with raw Markdown content, so what a test reads is what a handler reads.
 */

/** A person of a direct message, as the server lists them in `display_recipient`. */
export interface TestRecipient {
  id: number;
  email: string;
  full_name: string;
}

/** A reaction on a message. */
export interface TestReaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

interface TestMessageBase {
  id: number;
  sender_id: number;
  sender_email: string;
  sender_full_name: string;
  /** Raw Markdown, as sent. */
  content: string;
  /** UNIX seconds (the sandbox clock). */
  timestamp: number;
  recipient_id: number;
  reactions: TestReaction[];
  /** The client name recorded on the message. */
  client: string;
  /** Set once the message was edited (UNIX seconds). */
  last_edit_timestamp?: number;
}

/** A channel message: `display_recipient` is the channel's name, `subject` its topic. */
export interface TestChannelMessage extends TestMessageBase {
  type: "stream";
  stream_id: number;
  display_recipient: string;
  subject: string;
}

/** A direct message: `display_recipient` lists everyone in the conversation, the sender included. */
export interface TestDirectMessage extends TestMessageBase {
  type: "private";
  display_recipient: TestRecipient[];
  /** Always "" for a direct message. */
  subject: "";
}

/** A message as the server serves it; narrow on `type` to read the channel or the people. */
export type TestMessage = TestChannelMessage | TestDirectMessage;
