import StageKit

/// The one isolation domain of every platform's state.
///
/// Each platform keeps its own state type (Vimeo's videos, the generic API's assets, Alibaba Cloud's objects),
/// but an operation often spans two of them and the shared core: creating a Vimeo video adds its upload, an
/// upload's last byte completes its video, and every change is written to the one `index.json`. Isolating
/// them all to this actor makes such an operation one synchronous step, never interleaved with another
/// request, exactly as when a single actor held everything. It is a global actor because Swift isolates a
/// type to an actor only through one; sandboxes in one process therefore take turns, which costs little
/// since no state operation waits for the network.
@globalActor
actor SandboxActor {
    static let shared = SandboxActor()
}
