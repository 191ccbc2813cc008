/**
 * A message as the testing kit hands it to a test: the server's own shape (GET /messages, message
 * events) with raw Markdown content, so what a test reads is what a handler reads.
 */
export type {
  SandboxChannelMessage as TestChannelMessage,
  SandboxDirectMessage as TestDirectMessage,
  SandboxMessage as TestMessage,
  SandboxReaction as TestReaction,
  SandboxRecipient as TestRecipient,
} from "../sandbox/message-shape.ts";
