package functions

import (
	"github.com/streamsql/streamsql/types"
)

func resolveFloorCeilTemporal(name string, args []types.T) (Resolved, error) {
	return Resolved{}, errArgs(name, args)
}
