import StageKit

/// The one isolation domain of every platform's state and of the core's.
///
/// Each platform keeps its own state type (Vimeo's videos, the generic API's assets, Alibaba Cloud's objects),
/// but an operation often spans a platform and the shared core: creating a Vimeo video adds its upload, an
/// upload's last byte completes its video, and every change is written to the one `index.json`. Such an
/// operation must not interleave with another request's, or the index could be written between its two
/// halves; isolating every state to this one actor makes it a single synchronous step, exactly as when a
/// single actor held everything.
///
/// The price is that requests take turns for each step, including the disk waits inside it: every change
/// writes the index with fsyncs (of the file and of the folder), and a Vimeo picture's image is written too,
/// before the actor moves on. Upload bodies and OSS objects do not take turns: they are streamed to their
/// files outside the actor, which only records the result. It is a global actor because Swift isolates a type
/// to an actor only through one, so the sandboxes of one process take turns with each other too.
@globalActor
actor SandboxActor {
    /// The actor every state is isolated to.
    static let shared = SandboxActor()
}
