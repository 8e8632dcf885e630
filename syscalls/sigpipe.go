package syscalls

// sigpipe sends the process SIGPIPE when a write failed with EPIPE (a pipe
// or the host stream behind fd 1 has no reader left), as Linux's
// pipe_write does: by default the process dies of it; ignored, the call
// fails with EPIPE; blocked, the signal stays pending; caught, the handler
// runs when the call returns EPIPE.
func (k *Kernel) sigpipe(c *Call, out Outcome) Outcome {
	if out.Ret != ePIPE.Ret() || out.Err != nil || out.Action != Continue || out.Wait != nil {
		return out
	}
	if sig := k.sendSelf(c, sigPipe); sig.Action != Continue || sig.Err != nil {
		return sig
	}
	return out
}
