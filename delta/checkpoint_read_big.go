package delta

import "math/big"

type bigInt = big.Int

var bigOne = big.NewInt(1)
