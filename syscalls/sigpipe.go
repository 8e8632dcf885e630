package syscalls

// sigpipe gives the calling thread SIGPIPE when a write failed with EPIPE
// (a pipe or the host stream behind fd 1 has no reader left), as Linux's
// pipe_write does: by default the process dies of it; ignored, the call
// fails with EPIPE; blocked, the signal stays pending. A handler is not run
// (signal delivery is not supported): the call fails with EPIPE.
func (k *Kernel) sigpipe(c *Call, out Outcome) Outcome {
	if out.Ret != ePIPE.Ret() || out.Err != nil || out.Action != Continue || out.Wait != nil {
		return out
	}
	if h := k.sigactions[sigPipe].handler; h != sigDfl && h != sigIgn {
		return out
	}
	if sig := k.deliver(c, sigPipe); sig.Action != Continue || sig.Err != nil {
		return sig
	}
	return out
}
