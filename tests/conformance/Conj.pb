
3
c0/inputPlaceholder*
dtype0*
shape:
ž
c0/feed_inputConst*
dtype0*y
valuepBnJ`Uéï=ñsè=b'g>©{h¿ç¥¿g~·?@}ô¿I-?µQ4<Mdù¿¦œ">ÅÆw¿z-°¿1ôƒ?
±ý¿K%?[èª=n®½èÂö¿’àæ?³:ª¾>#¿ã6Š?®&K?
 
c0/opConjc0/input*
T0
™
c0/want0Const*
dtype0*y
valuepBnJ`Uéï=ñsè½b'g>©{h?ç¥¿g~·¿@}ô¿I-¿µQ4<Mdù?¦œ">ÅÆw?z-°¿1ôƒ¿
±ý¿K%¿[èª=n®=èÂö¿’àæ¿³:ª¾>#?ã6Š?®&K¿"ª