package envs

import (
	"fmt"
	"strconv"
	"strings"
)

// Observation formats: how Sokoban and FrozenLake draw a state (RAGEN's
// observation_format). The coordinate formats list where each kind of
// cell is, for models that read a grid's rows and columns poorly.
const (
	ObsGrid      = "grid"       // the symbol grid, one row per line (the zero value "" means this too)
	ObsCoord     = "coord"      // the board size and the cells of each kind, (row, col), zero-indexed
	ObsGridCoord = "grid_coord" // "Coordinates: " and the coord text, then "Grid Map: " and the grid
)

// checkObservation reports an observation format that is not one of the three.
func checkObservation(env, format string) error {
	switch format {
	case "", ObsGrid, ObsCoord, ObsGridCoord:
		return nil
	}
	return fmt.Errorf("%s: Observation %q must be %s, %s or %s", env, format, ObsGrid, ObsCoord, ObsGridCoord)
}

// RAGEN's env_instruction of CoordSokoban and CoordFrozenLake
// (config/envs.yaml), verbatim: YAML block scalars, so each line ends in a
// newline, trailing spaces included. Both say the coordinates run to
// (5, 5) whatever the board's size, as RAGEN's do.
const (
	coordSokobanInstruction = "You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets.\n" +
		"You are provided with a symbol grid and the zero-indexed coordinates of the player, each box, and each target. \n" +
		"Coordinates range from the top-left corner (0, 0) to the bottom-right corner (5, 5). \n" +
		"When you are exactly next to a box, you can push it by moving in the same direction. \n" +
		"You cannot push a box through a wall, and you cannot pull a box.\n" +
		"The answer should be a sequence of actions, like <answer>Right || Right || Up</answer>.\n"
	coordFrozenLakeInstruction = "You are solving the FrozenLake puzzle. The observation includes both a symbol grid and " +
		"zero-indexed coordinates for the start, goal, player, and any holes.\n" +
		"Coordinates range from the top-left corner (0, 0) to the bottom-right corner (5, 5).\n" +
		"Beware that the ice is slippery, so the agent might slide and end up in an unintended tile.\n" +
		"Respond with a sequence of actions such as <answer>Left || Up || Up</answer>.\n"
)

// coordList is one line of a coordinate rendering: a label and the cells
// (row-major indexes) it lists, in row-major order.
type coordList struct {
	label string
	cells []int
}

// renderCoords is RAGEN's format_coordinate_render: the board size, then
// "Label: (r, c), (r, c)" for each non-empty list, in the order given.
func renderCoords(rows, cols int, lists []coordList) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Board size: %d rows x %d cols (zero-indexed).", rows, cols)
	for _, l := range lists {
		if len(l.cells) == 0 {
			continue
		}
		b.WriteString("\n" + l.label + ": ")
		for i, c := range l.cells {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + strconv.Itoa(c/cols) + ", " + strconv.Itoa(c%cols) + ")")
		}
	}
	return b.String()
}

// observe assembles an observation in format from its coordinate text and
// its grid, each computed only when the format shows it.
func observe(format string, coords, grid func() string) string {
	switch format {
	case ObsCoord:
		return coords()
	case ObsGridCoord:
		return "Coordinates: \n" + coords() + "\n" + "Grid Map: \n" + grid()
	}
	return grid()
}
