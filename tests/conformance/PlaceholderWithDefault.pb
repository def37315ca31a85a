
3
c0/inputPlaceholder*
dtype0*
shape:
V
c0/feed_inputConst*
dtype0*1
value(B&";¿ú¢?‚÷<'&õ¿¿%ˆ¾×æ[¾
E
c0/opPlaceholderWithDefaultc0/input*
dtype0*
shape:
Q
c0/want0Const*
dtype0*1
value(B&";¿ú¢?‚÷<'&õ¿¿%ˆ¾×æ[¾
3
c1/inputPlaceholder*
dtype0*
shape:
;
c1/feed_inputConst*
dtype0*
valueBBq
E
c1/opPlaceholderWithDefaultc1/input*
dtype0*
shape:
6
c1/want0Const*
dtype0*
valueBBq
3
c2/inputPlaceholder*
dtype0*
shape:
V
c2/feed_inputConst*
dtype0*1
value(B&"c¹…¿ø©?v£z?ç±>Ê´é¼I)O½
K
c2/opPlaceholderWithDefaultc2/input*
dtype0*
shape
:
Q
c2/want0Const*
dtype0*1
value(B&"c¹…¿ø©?v£z?ç±>Ê´é¼I)O½
3
c3/inputPlaceholder*
dtype0*
shape:
V
c3/feed_inputConst*
dtype0*1
value(B&"‡Ûn¿×>|Ğ?øëj¿`µ¶=â§Í¿
K
c3/opPlaceholderWithDefaultc3/input*
dtype0*
shape
:
Q
c3/want0Const*
dtype0*1
value(B&"‡Ûn¿×>|Ğ?øëj¿`µ¶=â§Í¿"ª