package cli

import (
	"fmt"

	"github.com/ariadne-go/ariadne/lock"
)

// lockEvent tells the user on stderr that the command waits for a lock held
// by another live process (who, since when, until when it waits) or takes
// over the lock of one that is gone: a wait of up to lockMaxWait is never
// silent.
func (g *globals) lockEvent(e lock.Event) {
	g.notice("ariadne", fmt.Sprint(e))
}
